package dev.capk.vmieviction.shards;

import com.google.common.hash.Hashing;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.shards.ShardPlan.Lease;
import dev.capk.vmieviction.shards.ShardPlan.Plan;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Lease;
import io.kubernetes.client.openapi.models.V1LeaseList;
import io.kubernetes.client.openapi.models.V1LeaseSpec;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Preconditions;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shards (infra clusters, by key) shared out among the replicas through Leases in one namespace,
 * the Kubernetes API being the only coordination. Each replica renews a membership Lease of its
 * own; every {@code retryPeriod} it lists the Leases of its prefix (members and shards, one
 * request), takes the live members (a Lease seen to change within its duration), asks {@link
 * ShardPlan} which shards it should hold, and writes: acquires or renews those (one Lease per
 * shard, optimistic concurrency: a 409 means another replica won), and clears the holder of those
 * it should give back once the caller no longer runs them.
 *
 * <p>Expiry is judged as client-go's leader election judges it: by when this replica saw a Lease
 * change, on its own monotonic clock, never by comparing another machine's clock. A shard counts as
 * {@linkplain #holds held} only until {@code renewDeadline} after the last renewal that succeeded
 * (counted from when it was sent), shorter than the lease duration others wait: a replica that
 * cannot renew stops running a shard before another may take it.
 */
public final class ShardLeases implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ShardLeases.class);

  /** The prefix (--leader-election-id) every Lease of one deployment carries. */
  public static final String GROUP_LABEL = "capk.cluster.x-k8s.io/vmi-eviction-shards";

  /** {@code member} or {@code shard}. */
  public static final String ROLE_LABEL = "capk.cluster.x-k8s.io/vmi-eviction-shard-role";

  /** On a shard's Lease: its key. */
  public static final String SHARD_LABEL = "capk.cluster.x-k8s.io/vmi-eviction-shard";

  static final String MEMBER = "member";
  static final String SHARD = "shard";

  /**
   * @param namespace where the Leases live
   * @param prefix the Leases' name prefix and group label value (a DNS label)
   * @param identity this replica's, unique per process
   */
  public record Settings(
      String namespace,
      String prefix,
      String identity,
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod) {}

  /** When this replica saw a Lease's resourceVersion change. */
  private record Seen(String resourceVersion, long atNanos) {}

  private final ApiClient client;
  private final CoordinationV1Api api;
  private final Settings settings;
  private final Runnable changed;
  private final Predicate<String> running;
  private final ScheduledExecutorService ticker;
  private final ScheduledExecutorService lapses;
  private final Map<String, Seen> seen = new HashMap<>();

  /** Shard to when its last successful renewal was sent (System.nanoTime). */
  private final Map<String, Long> renewedAt = new ConcurrentHashMap<>();

  /** Shards to give back once the caller stopped running them: not held meanwhile. */
  private final Set<String> releasing = ConcurrentHashMap.newKeySet();

  /** Null until the caller first said which shards exist: no membership before. */
  private volatile Set<String> wanted;

  private volatile Set<String> members = Set.of();
  private final AtomicReference<Set<String>> heldBefore = new AtomicReference<>(Set.of());
  private boolean closed;

  /**
   * @param changed told (on the leases' thread) when the shards held change, to start or stop them
   * @param running whether the caller still runs a shard: a shard is released only once not
   */
  public ShardLeases(
      ApiClient client, Settings settings, Runnable changed, Predicate<String> running) {
    this.client = client;
    this.api = new CoordinationV1Api(client);
    this.settings = settings;
    this.changed = changed;
    this.running = running;
    this.ticker =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("shard-leases").daemon().factory());
    this.lapses =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("shard-lapses").daemon().factory());
  }

  /** {@code vmi_eviction_infra_cluster_owned{infra_cluster}}: 1 per shard held. */
  public ShardLeases metrics(PrometheusRegistry registry) {
    GaugeWithCallback.builder()
        .name("vmi_eviction_infra_cluster_owned")
        .help("1 for each infra cluster (shard key) this replica holds the Lease of and runs.")
        .labelNames("infra_cluster")
        .callback(c -> held().forEach(k -> c.call(1, k)))
        .register(registry);
    return this;
  }

  public ShardLeases start() {
    ticker.scheduleWithFixedDelay(
        this::tickSafely, 0, settings.retryPeriod().toMillis(), TimeUnit.MILLISECONDS);
    long check = Math.max(50, settings.retryPeriod().toMillis() / 4);
    lapses.scheduleWithFixedDelay(this::tellIfChanged, check, check, TimeUnit.MILLISECONDS);
    log.info(
        "shard leases started namespace={} prefix={} identity={}",
        settings.namespace(),
        settings.prefix(),
        settings.identity());
    return this;
  }

  /**
   * The shard keys that exist now (DNS labels); the next pass shares them out. A replica becomes a
   * member only once told: one whose caller never gets that far (its caches never sync) is given no
   * shard.
   */
  public void want(Set<String> keys) {
    if (!keys.equals(wanted)) {
      wanted = Set.copyOf(keys);
      try {
        ticker.execute(this::tickSafely);
      } catch (RejectedExecutionException closed) {
        // closing: nothing more is acquired
      }
    }
  }

  /** Held: its Lease is ours, renewed within the renew deadline, and not being given back. */
  public boolean holds(String key) {
    Long at = renewedAt.get(key);
    return at != null
        && System.nanoTime() - at < settings.renewDeadline().toNanos()
        && !releasing.contains(key);
  }

  public Set<String> held() {
    Set<String> out = new TreeSet<>();
    renewedAt.keySet().stream().filter(this::holds).forEach(out::add);
    return out;
  }

  /** The live members at the last pass, this replica among them. */
  public Set<String> members() {
    Set<String> out = new TreeSet<>(members);
    out.add(settings.identity());
    return out;
  }

  /** Whether this replica is the one that reports {@code item} (a problem concerning no shard). */
  public boolean reports(String item) {
    return ShardPlan.first(item, members()).equals(settings.identity());
  }

  private void tickSafely() {
    try {
      tick();
    } catch (RuntimeException e) {
      log.error("shard lease pass failed error={}", e.getClass().getName(), e);
    } finally {
      tellIfChanged();
    }
  }

  private synchronized void tick() {
    Set<String> shards = wanted;
    if (closed || shards == null) {
      return;
    }
    long now = System.nanoTime();
    Deadline deadline = Deadline.after(settings.renewDeadline().dividedBy(2));
    V1LeaseList list;
    try {
      list = new RawApi(client, deadline).get(listCall(), V1LeaseList.class);
    } catch (ApiException e) {
      log.warn("shard leases not listed error=\"{}\"", RawApi.describe(e));
      return; // the shards held lapse at their renew deadline
    }
    Map<String, V1Lease> shardLeases = new HashMap<>();
    Map<String, Lease> views = new HashMap<>();
    Set<String> live = new HashSet<>();
    V1Lease mine = null;
    for (V1Lease l : list.getItems()) {
      boolean expired = expired(l, now, 1);
      String holder = l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
      if (MEMBER.equals(label(l, ROLE_LABEL))) {
        if (settings.identity().equals(holder)) {
          mine = l;
        } else if (!expired && holder != null) {
          live.add(holder);
        } else if (expired(l, now, 2)) {
          forget(l, deadline);
        }
      } else if (SHARD.equals(label(l, ROLE_LABEL)) && label(l, SHARD_LABEL) != null) {
        String key = label(l, SHARD_LABEL);
        if (!shards.contains(key) && (holder == null || holder.isEmpty()) && expired(l, now, 2)) {
          forget(l, deadline); // an infra cluster gone: its Lease free and untouched for a while
          continue;
        }
        shardLeases.put(key, l);
        views.put(key, new Lease(holder, expired));
      }
    }
    seen.keySet().retainAll(list.getItems().stream().map(l -> l.getMetadata().getName()).toList());
    renewMembership(mine, deadline);
    members = Set.copyOf(live);
    apply(ShardPlan.decide(settings.identity(), live, shards, views), shardLeases, deadline);
  }

  private void apply(Plan plan, Map<String, V1Lease> shardLeases, Deadline deadline) {
    for (String key : plan.hold()) {
      releasing.remove(key);
      write(key, shardLeases.get(key), settings.identity(), deadline);
    }
    for (String key : plan.release()) {
      if (releasing.add(key) || running.test(key)) {
        // Still ours until the caller stopped running it: renewed meanwhile.
        write(key, shardLeases.get(key), settings.identity(), deadline);
      } else if (write(key, shardLeases.get(key), "", deadline)) {
        releasing.remove(key);
        renewedAt.remove(key);
        log.info("shard released shard={}", key);
      }
    }
    // Held by another now, or gone: not ours, whatever we last renewed.
    renewedAt.keySet().removeIf(k -> !plan.hold().contains(k) && !plan.release().contains(k));
  }

  /**
   * The shards held changed since last told: the caller starts or stops them. Also run between
   * passes, on a thread of its own: a shard whose renewals failed stops at its renew deadline, even
   * while a pass waits for the API server.
   */
  private void tellIfChanged() {
    Set<String> now = held();
    Set<String> before = heldBefore.getAndSet(now);
    if (!now.equals(before)) {
      log.info("shards held shards={} members={}", now, members().size());
      try {
        changed.run();
      } catch (RuntimeException e) {
        log.error("telling the shards held failed error={}", e.getClass().getName(), e);
      }
    }
  }

  /** A lease seen unchanged for {@code durations} of its duration: its holder stopped. */
  private boolean expired(V1Lease l, long now, int durations) {
    String name = l.getMetadata().getName();
    String rv = l.getMetadata().getResourceVersion();
    Seen s = seen.get(name);
    if (s == null || !s.resourceVersion().equals(rv)) {
      s = new Seen(rv, now);
      seen.put(name, s);
    }
    Integer seconds = l.getSpec() == null ? null : l.getSpec().getLeaseDurationSeconds();
    long duration =
        seconds == null
            ? settings.leaseDuration().toNanos()
            : TimeUnit.SECONDS.toNanos(Math.max(1, seconds));
    return now - s.atNanos() > durations * duration;
  }

  /**
   * Acquires, renews or (holder "") clears a shard's Lease; true when written. A 409 means another
   * replica wrote it since it was listed: the next pass reads it again.
   */
  private boolean write(String key, V1Lease current, String holder, Deadline deadline) {
    long sent = System.nanoTime();
    String name = shardLeaseName(key);
    V1Lease lease = current != null ? current : newLease(name, SHARD, key);
    V1LeaseSpec spec = lease.getSpec() == null ? new V1LeaseSpec() : lease.getSpec();
    lease.setSpec(spec);
    OffsetDateTime stamp = OffsetDateTime.now(ZoneOffset.UTC);
    if (!holder.isEmpty() && !holder.equals(spec.getHolderIdentity())) {
      spec.acquireTime(stamp)
          .leaseTransitions(Objects.requireNonNullElse(spec.getLeaseTransitions(), 0) + 1);
    }
    spec.holderIdentity(holder.isEmpty() ? null : holder)
        .leaseDurationSeconds(durationSeconds())
        .renewTime(stamp);
    try {
      RawApi raw = new RawApi(client, deadline);
      raw.get(
          current == null
              ? api.createNamespacedLease(settings.namespace(), lease).buildCall(null)
              : api.replaceNamespacedLease(name, settings.namespace(), lease).buildCall(null),
          V1Lease.class);
    } catch (ApiException e) {
      if (e.getCode() != 409) {
        log.warn("shard lease not written shard={} error=\"{}\"", key, RawApi.describe(e));
      }
      if (e.getCode() == 409 || e.getCode() == 404) {
        renewedAt.remove(key); // another replica's now, or deleted: not ours until read again
      }
      return false;
    }
    if (holder.isEmpty()) {
      return true;
    }
    if (renewedAt.put(key, sent) == null) {
      log.info("shard acquired shard={} lease={}", key, name);
    }
    return true;
  }

  /** This replica's membership Lease, as listed (null: none yet), renewed or created. */
  private void renewMembership(V1Lease listed, Deadline deadline) {
    String name = memberLeaseName(settings.identity());
    V1Lease body = listed != null ? listed : newLease(name, MEMBER, null);
    body.setSpec(
        Objects.requireNonNullElseGet(body.getSpec(), V1LeaseSpec::new)
            .holderIdentity(settings.identity())
            .leaseDurationSeconds(durationSeconds())
            .renewTime(OffsetDateTime.now(ZoneOffset.UTC)));
    try {
      new RawApi(client, deadline)
          .get(
              listed == null
                  ? api.createNamespacedLease(settings.namespace(), body).buildCall(null)
                  : api.replaceNamespacedLease(name, settings.namespace(), body).buildCall(null),
              V1Lease.class);
    } catch (ApiException e) {
      log.warn("membership lease not renewed lease={} error=\"{}\"", name, RawApi.describe(e));
    }
  }

  /**
   * A member gone, or a shard no longer wanted and free, for two lease durations: its Lease
   * deleted, if unchanged since listed (a replica that wants the shard again creates it anew).
   */
  private void forget(V1Lease l, Deadline deadline) {
    V1ObjectMeta meta = l.getMetadata();
    try {
      new RawApi(client, deadline)
          .execute(
              api.deleteNamespacedLease(meta.getName(), settings.namespace())
                  .body(
                      new V1DeleteOptions()
                          .preconditions(
                              new V1Preconditions()
                                  .uid(meta.getUid())
                                  .resourceVersion(meta.getResourceVersion())))
                  .buildCall(null))
          .orThrow();
      log.info("lease of a departed replica or infra cluster deleted lease={}", meta.getName());
    } catch (ApiException e) {
      log.debug("lease not deleted lease={} code={}", meta.getName(), e.getCode());
    }
  }

  private okhttp3.Call listCall() throws ApiException {
    return api.listNamespacedLease(settings.namespace())
        .labelSelector(GROUP_LABEL + "=" + settings.prefix())
        .buildCall(null);
  }

  private V1Lease newLease(String name, String role, String key) {
    Map<String, String> labels = new HashMap<>();
    labels.put(GROUP_LABEL, settings.prefix());
    labels.put(ROLE_LABEL, role);
    if (key != null) {
      labels.put(SHARD_LABEL, key);
    }
    return new V1Lease()
        .apiVersion("coordination.k8s.io/v1")
        .kind("Lease")
        .metadata(new V1ObjectMeta().name(name).namespace(settings.namespace()).labels(labels));
  }

  private int durationSeconds() {
    return (int) Math.max(1, settings.leaseDuration().toSeconds());
  }

  public String shardLeaseName(String key) {
    return settings.prefix() + "-shard-" + key;
  }

  /** The identity may hold any character: the name holds a digest of it. */
  public String memberLeaseName(String identity) {
    return settings.prefix()
        + "-member-"
        + Hashing.sha256().hashString(identity, StandardCharsets.UTF_8).toString().substring(0, 16);
  }

  private static String label(V1Lease l, String key) {
    Map<String, String> labels = l.getMetadata().getLabels();
    return labels == null ? null : labels.get(key);
  }

  /**
   * Stops the passes, then gives back at once every shard the caller no longer runs and the
   * membership: the other replicas share them out at their next pass, without waiting for expiry.
   */
  @Override
  public void close() {
    lapses.shutdownNow();
    ticker.shutdownNow();
    try {
      ticker.awaitTermination(settings.renewDeadline().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      giveBack();
    }
  }

  private void giveBack() {
    Deadline deadline = Deadline.after(settings.renewDeadline());
    RawApi raw = new RawApi(client, deadline);
    for (String key : Set.copyOf(renewedAt.keySet())) {
      if (running.test(key)) {
        log.warn("shard not released: still running shard={}", key);
        continue; // left to expire
      }
      releasing.add(key);
      try {
        V1Lease l =
            raw.get(
                api.readNamespacedLease(shardLeaseName(key), settings.namespace()).buildCall(null),
                V1Lease.class);
        if (l.getSpec() != null && settings.identity().equals(l.getSpec().getHolderIdentity())) {
          write(key, l, "", deadline);
          log.info("shard released shard={}", key);
        }
      } catch (ApiException e) {
        log.info("shard not released shard={} error=\"{}\"", key, RawApi.describe(e));
      }
      renewedAt.remove(key);
    }
    try {
      raw.execute(
              api.deleteNamespacedLease(memberLeaseName(settings.identity()), settings.namespace())
                  .buildCall(null))
          .orThrow();
    } catch (ApiException e) {
      log.info("membership lease not deleted error=\"{}\"", RawApi.describe(e));
    }
  }
}
