package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.capk.KubevirtCluster;
import dev.capk.vmieviction.api.capk.KubevirtClusterList;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.infra.InfraBindings;
import dev.capk.vmieviction.infra.InfraBindings.KubevirtClusterRef;
import dev.capk.vmieviction.infra.InfraBindings.SecretRef;
import dev.capk.vmieviction.infra.InfraBindings.Target;
import dev.capk.vmieviction.infra.InfraEventReasons;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.logging.InformerFailures;
import dev.capk.vmieviction.runtime.ManagedController;
import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * External infra ({@code --infra-clusters=external}): watches the management cluster's
 * KubevirtClusters (in the watched namespaces) and the infra Secrets they name, and keeps one
 * {@link InfraPipeline} running per (infra connection, infra namespace) that {@link InfraBindings}
 * derives from them; pipelines start and stop as KubevirtClusters and Secrets change, within a
 * second of the watch event, and only while this replica leads (they are this controller's
 * "workers"). A KubevirtCluster that cannot be bound, or whose infra cluster does not answer, gets
 * a Warning Event (a series: repeats update it at most every 30 s, and this class reports each
 * problem again at most every {@link #REPORT_AGAIN}) and a log line, never its Secret's content.
 * Readiness is the management caches' only: an infra cluster that is down makes no replica unready.
 */
final class ExternalInfraController implements ManagedController {

  private static final Logger log = LoggerFactory.getLogger(ExternalInfraController.class);

  static final String NAME = "vmi-eviction-external-infra";

  /** Bindings are computed again this often anyway: retries after unreadable Secrets. */
  static final Duration RESYNC_EVERY = Duration.ofSeconds(10);

  /** A change is acted on after this pause, so that a burst of events costs one pass. */
  static final Duration DEBOUNCE = Duration.ofMillis(200);

  /**
   * List/watch failures of one pipeline within {@link #UNREACHABLE_WITHIN} that make it
   * unreachable.
   */
  static final int UNREACHABLE_AFTER = 3;

  static final Duration UNREACHABLE_WITHIN = Duration.ofSeconds(30);

  /** The same problem of a KubevirtCluster is logged and evented again after this, at most. */
  static final Duration REPORT_AGAIN = Duration.ofMinutes(5);

  private final ManagerOptions options;
  private final ManagementInformers management;
  private final InfraPipeline.Shared shared;
  private final EventSeriesRecorder managementEvents;
  private final List<SharedInformerFactory> factories = new ArrayList<>();
  private final Map<String, SharedIndexInformer<KubevirtCluster>> kubevirtClusters =
      new LinkedHashMap<>();
  private final InfraSecretWatches secrets;
  private final Map<String, InfraConnection> connections = new HashMap<>();
  private final Map<Target, InfraPipeline> pipelines = new ConcurrentHashMap<>();
  private final Map<String, Reported> reported = new ConcurrentHashMap<>();
  private final Map<Target, java.util.Deque<Long>> failures = new ConcurrentHashMap<>();

  /** Each referenced Secret's data as last read: kept while a read fails. */
  private final Map<SecretRef, Map<String, byte[]>> lastKnown = new HashMap<>();

  private final AtomicBoolean pending = new AtomicBoolean();
  private volatile ScheduledExecutorService loop;
  private volatile boolean leading;

  private record Reported(String message, long atNanos) {}

  ExternalInfraController(
      ManagerOptions options,
      ApiClient watchClient,
      ApiClient requestClient,
      ManagementInformers management,
      InfraPipeline.Shared shared) {
    this.options = options;
    this.management = management;
    this.shared = shared;
    this.managementEvents = shared.managementEvents();
    GenericKubernetesApi<KubevirtCluster, KubevirtClusterList> api =
        new GenericKubernetesApi<>(
            KubevirtCluster.class,
            KubevirtClusterList.class,
            CapkApi.GROUP,
            CapkApi.VERSION,
            CapkApi.KUBEVIRT_CLUSTER_PLURAL,
            watchClient);
    List<String> scopes =
        options.namespaces.isEmpty() ? List.of(VmiInformers.ALL) : List.copyOf(options.namespaces);
    ResourceEventHandler<KubevirtCluster> changed =
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(KubevirtCluster k) {
            trigger();
          }

          @Override
          public void onUpdate(KubevirtCluster before, KubevirtCluster after) {
            trigger();
          }

          @Override
          public void onDelete(KubevirtCluster k, boolean stateUnknown) {
            trigger();
          }
        };
    for (String ns : scopes) {
      SharedInformerFactory factory = new SharedInformerFactory(watchClient);
      InformerFailures failures = ManagementInformers.failures("KubevirtCluster", ns);
      SharedIndexInformer<KubevirtCluster> informer =
          factory.sharedIndexInformerFor(
              failures.guard(
                  ManagementInformers.listerWatcher(
                      api,
                      ns,
                      "KubevirtCluster",
                      new RefusedListPause(
                          ManagementInformers.REFUSED_LIST_PAUSE, System::nanoTime))),
              KubevirtCluster.class,
              0,
              ManagementInformers.failures(failures));
      informer.setTransform(o -> ManagementInformers.trim((KubevirtCluster) o));
      informer.addEventHandler(changed);
      kubevirtClusters.put(ns, informer);
      factories.add(factory);
    }
    factories.addAll(management.factories());
    this.secrets = new InfraSecretWatches(watchClient, requestClient, this::trigger);
    // A tenant's rotated guest kubeconfig: its VMIs take their next step now.
    management.onKubeconfigChanged(
        (ns, cluster) -> pipelines.values().forEach(p -> p.kubeconfigChanged(ns, cluster)));
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<SharedInformerFactory> informerFactories() {
    return List.copyOf(factories);
  }

  /** The management caches only: no infra cluster's state makes a replica unready. */
  @Override
  public boolean hasSynced() {
    return kubevirtClusters.values().stream().allMatch(SharedIndexInformer::hasSynced)
        && management.hasSynced();
  }

  /** VMIs waiting for a worker, over all pipelines. */
  int queueLength() {
    return pipelines.values().stream().mapToInt(InfraPipeline::queueLength).sum();
  }

  /** The infra targets running now (tests, status). */
  Set<Target> running() {
    return Set.copyOf(pipelines.keySet());
  }

  @Override
  public Controller workers() {
    return new Controller() {
      private final CountDownLatch stopped = new CountDownLatch(1);

      @Override
      public void run() {
        startLoop();
        try {
          stopped.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public void shutdown() {
        stopLoop();
        stopped.countDown();
      }
    };
  }

  private synchronized void startLoop() {
    if (loop != null) {
      return;
    }
    leading = true;
    loop =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "infra-bindings");
              t.setDaemon(true);
              return t;
            });
    loop.scheduleWithFixedDelay(
        this::resyncSafely, 0, RESYNC_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    log.info("external infra started: binding KubevirtClusters to infra clusters");
  }

  private void stopLoop() {
    ScheduledExecutorService l;
    synchronized (this) {
      leading = false;
      l = loop;
      loop = null;
    }
    if (l != null) {
      l.shutdownNow();
      try {
        l.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (this) {
      pipelines.values().forEach(InfraPipeline::close);
      pipelines.clear();
      connections.values().forEach(InfraConnection::close);
      connections.clear();
      lastKnown.clear();
      secrets.close();
    }
  }

  /** Something changed: compute the bindings again shortly (one pass per burst). */
  void trigger() {
    ScheduledExecutorService l = loop;
    if (l == null || !pending.compareAndSet(false, true)) {
      return;
    }
    try {
      l.schedule(
          () -> {
            pending.set(false);
            resyncSafely();
          },
          DEBOUNCE.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      pending.set(false);
    }
  }

  private void resyncSafely() {
    try {
      resync();
    } catch (RuntimeException e) {
      log.error("binding infra clusters failed error={}", e.getClass().getName(), e);
    }
  }

  /** One pass: KubevirtClusters and Secrets to bindings, then pipelines started and stopped. */
  private synchronized void resync() {
    if (!leading) {
      return;
    }
    List<KubevirtCluster> all = new ArrayList<>();
    kubevirtClusters.values().forEach(i -> all.addAll(i.getIndexer().list()));
    Set<SecretRef> referenced = InfraBindings.referencedSecrets(all);
    secrets.retain(referenced);
    SecretReads reads = readSecrets(referenced);
    InfraBindings bindings =
        InfraBindings.of(
            all,
            reads.data()::get,
            ref -> Optional.ofNullable(reads.unreadable().get(ref)),
            options.allowInsecureGuestTls);
    Map<KubevirtClusterRef, KubevirtCluster> byRef = new HashMap<>();
    all.forEach(
        k ->
            byRef.put(
                new KubevirtClusterRef(k.getMetadata().getNamespace(), k.getMetadata().getName()),
                k));
    List<InfraBindings.Problem> problems = new ArrayList<>(bindings.problems());
    Set<String> unusable = openConnections(bindings, problems);
    syncPipelines(bindings, unusable, byRef);
    reportProblems(problems, byRef);
  }

  /** The referenced infra Secrets' data, and the ones never read that could not be read now. */
  private record SecretReads(
      Map<SecretRef, Optional<Map<String, byte[]>>> data, Map<SecretRef, String> unreadable) {}

  private SecretReads readSecrets(Set<SecretRef> referenced) {
    Map<SecretRef, Optional<Map<String, byte[]>>> data = new HashMap<>();
    Map<SecretRef, String> unreadable = new HashMap<>();
    lastKnown.keySet().retainAll(referenced);
    for (SecretRef ref : referenced) {
      try {
        Optional<Map<String, byte[]>> d = secrets.data(ref);
        d.ifPresentOrElse(v -> lastKnown.put(ref, v), () -> lastKnown.remove(ref));
        data.put(ref, d);
      } catch (InfraSecretWatches.Unreadable e) {
        // A failed read is not an answer: what was read before still holds; only a Secret never
        // read is a problem (of its KubevirtClusters only), and the next pass reads again.
        Map<String, byte[]> last = lastKnown.get(ref);
        data.put(ref, Optional.ofNullable(last));
        if (last == null) {
          unreadable.put(ref, e.getMessage());
        } else {
          log.info(
              "infra secret unreadable, last read kept secret={} error={}", ref, e.getMessage());
        }
      }
    }
    return new SecretReads(data, unreadable);
  }

  /**
   * Connections: one per distinct kubeconfig.
   *
   * @return the ids of the connections whose kubeconfig is unusable (told in {@code problems})
   */
  private Set<String> openConnections(
      InfraBindings bindings, List<InfraBindings.Problem> problems) {
    Set<String> unusable = new java.util.HashSet<>();
    for (InfraBindings.Connection c : bindings.connections().values()) {
      if (connections.containsKey(c.id())) {
        continue;
      }
      try {
        connections.put(c.id(), InfraConnection.open(c));
        if (c.allowsInsecureTls()) {
          log.warn(
              "infra kubeconfig relaxes TLS, accepted (--allow-insecure-guest-tls) infra=\"{}\"",
              c.displayName());
        }
        log.info("infra connection opened infra=\"{}\"", c.displayName());
      } catch (InfraConnection.Unusable e) {
        unusable.add(c.id());
        bindings
            .targets()
            .forEach(
                (t, b) -> {
                  if (t.connectionId().equals(c.id())) {
                    b.kubevirtClusters()
                        .forEach(
                            k ->
                                problems.add(
                                    new InfraBindings.Problem(
                                        k,
                                        InfraEventReasons.INFRA_SECRET_INVALID,
                                        c.displayName() + ": " + e.getMessage())));
                  }
                });
      }
    }
    return unusable;
  }

  /**
   * Pipelines: stop what is no longer bound, start what is new, rebind the others; then close the
   * connections no pipeline uses.
   */
  private void syncPipelines(
      InfraBindings bindings,
      Set<String> unusable,
      Map<KubevirtClusterRef, KubevirtCluster> byRef) {
    for (Target t : Set.copyOf(pipelines.keySet())) {
      if (!bindings.targets().containsKey(t) || unusable.contains(t.connectionId())) {
        pipelines.remove(t).close();
        failures.remove(t);
      }
    }
    bindings
        .targets()
        .forEach(
            (t, bound) -> {
              if (unusable.contains(t.connectionId())) {
                return;
              }
              List<V1ObjectReference> kvcs =
                  bound.kubevirtClusters().stream()
                      .sorted()
                      .map(k -> reference(k, byRef.get(k)))
                      .toList();
              InfraPipeline running = pipelines.get(t);
              if (running != null) {
                running.rebind(bound, kvcs);
                return;
              }
              InfraPipeline p =
                  new InfraPipeline(
                      t,
                      connections.get(t.connectionId()),
                      bound,
                      kvcs,
                      shared,
                      e -> unreachable(t, e));
              pipelines.put(t, p);
              p.start();
            });
    for (String id : Set.copyOf(connections.keySet())) {
      boolean used = pipelines.keySet().stream().anyMatch(t -> t.connectionId().equals(id));
      if (!used) {
        InfraConnection c = connections.remove(id);
        c.close();
        log.info("infra connection closed infra=\"{}\"", c.connection.displayName());
      }
    }
  }

  /** Problems: said once per change, again after REPORT_AGAIN while they last. */
  private void reportProblems(
      List<InfraBindings.Problem> problems, Map<KubevirtClusterRef, KubevirtCluster> byRef) {
    Set<String> current = new java.util.HashSet<>();
    for (InfraBindings.Problem p : problems) {
      String key = p.kubevirtCluster() + "/" + p.reason();
      current.add(key);
      report(
          key,
          reference(p.kubevirtCluster(), byRef.get(p.kubevirtCluster())),
          p.reason(),
          p.message());
    }
    reported
        .keySet()
        .removeIf(
            k ->
                !current.contains(k)
                    && !k.endsWith("/" + InfraEventReasons.INFRA_CLUSTER_UNREACHABLE));
  }

  /**
   * A pipeline's VMI informer failed to list or watch (it tries again a second later). One failure
   * is a blip (a watch cut, a 429): the infra cluster counts as unreachable only after {@link
   * #UNREACHABLE_AFTER} failures within {@link #UNREACHABLE_WITHIN}.
   */
  private void unreachable(Target target, Throwable e) {
    InfraPipeline p = pipelines.get(target);
    if (p == null) {
      return;
    }
    long now = System.nanoTime();
    java.util.Deque<Long> recent =
        failures.computeIfAbsent(target, t -> new java.util.ArrayDeque<>());
    synchronized (recent) {
      recent.addLast(now);
      while (!recent.isEmpty() && now - recent.peekFirst() > UNREACHABLE_WITHIN.toNanos()) {
        recent.removeFirst();
      }
      if (recent.size() < UNREACHABLE_AFTER) {
        return;
      }
    }
    String why = describe(e);
    String message =
        "The VMIs of "
            + p.name
            + " cannot be listed or watched ("
            + why
            + "): their evacuations wait until the infra API server answers";
    for (V1ObjectReference kvc : p.kubevirtClusters()) {
      report(
          kvc.getNamespace()
              + "/"
              + kvc.getName()
              + "/"
              + InfraEventReasons.INFRA_CLUSTER_UNREACHABLE,
          kvc,
          InfraEventReasons.INFRA_CLUSTER_UNREACHABLE,
          message);
    }
  }

  /**
   * How a list/watch failed, without the server's text or the exception's message (which may quote
   * addresses or content): the HTTP status, else the I/O failure's kind.
   */
  static String describe(Throwable e) {
    if (e instanceof ApiException a && a.getCode() != 0) {
      return ApiStatus.describeWithoutServerText(a);
    }
    Throwable cause = e;
    // GenericKubernetesApi wraps an I/O failure in an IllegalStateException.
    while ((cause instanceof IllegalStateException || cause instanceof ApiException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return "no answer: " + cause.getClass().getSimpleName();
  }

  private void report(String key, V1ObjectReference kvc, String reason, String message) {
    long now = System.nanoTime();
    Reported last = reported.get(key);
    if (last != null
        && last.message().equals(message)
        && now - last.atNanos() < REPORT_AGAIN.toNanos()) {
      return;
    }
    reported.put(key, new Reported(message, now));
    log.warn(
        "kubevirtcluster problem kubevirtCluster={}/{} reason={} detail=\"{}\"",
        kvc.getNamespace(),
        kvc.getName(),
        reason,
        message);
    managementEvents.record(kvc, "", true, reason, message);
  }

  private static V1ObjectReference reference(KubevirtClusterRef ref, KubevirtCluster kvc) {
    return new V1ObjectReference()
        .apiVersion(CapkApi.GROUP + "/" + CapkApi.VERSION)
        .kind(CapkApi.KUBEVIRT_CLUSTER_KIND)
        .namespace(ref.namespace())
        .name(ref.name())
        .uid(kvc == null || kvc.getMetadata() == null ? null : kvc.getMetadata().getUid());
  }

  @Override
  public void stopping() {
    stopLoop();
  }

  @Override
  public void close() {
    stopLoop();
  }
}
