package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import com.google.gson.reflect.TypeToken;
import dev.capk.vmieviction.drain.DrainStepper.EvictionOutcome.Kind;
import dev.capk.vmieviction.drain.PodFilters.DaemonSetLookup;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.Watch;
import java.io.IOException;
import java.lang.reflect.Type;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node drains a controller carries out in steps, each under a key of the caller's (a VMI, a
 * NodeMaintenance): the watch on the node's pods, which calls back when pods leave, and the drain's
 * memory between steps, from {@link #pods} to {@link #end}. Threads for the steps' eviction
 * requests are shared by all drains.
 */
public final class SteppedDrains implements AutoCloseable {

  public record Drain(ApiClient client, String node, NodePodWatch watch, DrainMemory memory) {}

  private final Duration baseRetry;
  private final Duration maxRetry;
  private final Map<String, Drain> drains = new ConcurrentHashMap<>();
  private final ExecutorService evictions;

  /** Eviction support per client, asked at its first drain, forgotten with it (weak keys). */
  private final Map<ApiClient, CompletableFuture<Optional<String>>> evictionSupport =
      Collections.synchronizedMap(new WeakHashMap<>());

  /**
   * {@code threadName} names the eviction threads ({@code %d}: their number); {@code baseRetry},
   * the first wait after a refused eviction, is cut to {@code maxRetry}, the longest.
   */
  public SteppedDrains(String threadName, Duration baseRetry, Duration maxRetry) {
    this.baseRetry = baseRetry.compareTo(maxRetry) > 0 ? maxRetry : baseRetry;
    this.maxRetry = maxRetry;
    // A virtual thread per eviction call: a thousand drains under way cost no thousand stacks.
    this.evictions =
        Executors.newThreadPerTaskExecutor(
            new ThreadFactoryBuilder()
                .setThreadFactory(Thread.ofVirtual().factory())
                .setNameFormat(threadName)
                .build());
  }

  /** Lists a node's pods (all namespaces) by the caller's client (its bounds, counts). */
  @FunctionalInterface
  public interface PodList<X extends Exception> {
    V1PodList list() throws ApiException, X;
  }

  /** The pods a step drains, its drain, and whether that drain's watch was opened just now. */
  public record Pods(List<V1Pod> pods, Drain drain, boolean opened) {}

  /**
   * The drain under {@code key} of {@code node} through {@code client}, opened (its watch started,
   * calling {@code onPodsLeft} with the key) if there is none, or if its watch gave up or was for
   * another client or node; and the node's pods: the watch's cache once it has listed, else {@code
   * list}, from which a watch started here resumes (one list for both).
   */
  public <X extends Exception> Pods pods(
      String key,
      ApiClient client,
      String node,
      BiConsumer<String, String> onPodsLeft,
      PodList<X> list)
      throws ApiException, X {
    Drain current = drains.get(key);
    boolean usable =
        current != null
            && current.client == client
            && current.node.equals(node)
            && current.watch.failure().isEmpty();
    Optional<List<V1Pod>> watched = usable ? current.watch.pods() : Optional.empty();
    if (watched.isPresent()) {
      return new Pods(watched.get(), current, false);
    }
    V1PodList listed = list.list();
    List<V1Pod> pods = listed.getItems() == null ? List.of() : listed.getItems();
    if (usable) {
      return new Pods(pods, current, false);
    }
    Drain opened =
        new Drain(
            client,
            node,
            NodePodWatch.start(
                new RawApi(client), node, () -> onPodsLeft.accept(key, node), listed),
            current != null && current.node.equals(node)
                ? current.memory
                : new DrainMemory(baseRetry, maxRetry));
    Optional.ofNullable(drains.put(key, opened)).ifPresent(replaced -> replaced.watch.close());
    return new Pods(pods, opened, true);
  }

  public DrainStepper stepper(ApiClient client) {
    return new DrainStepper(client, evictions, Clock.systemUTC(), evictionSupport);
  }

  public Optional<Drain> get(String key) {
    return Optional.ofNullable(drains.get(key));
  }

  public Optional<Drain> end(String key) {
    Optional<Drain> ended = Optional.ofNullable(drains.remove(key));
    ended.ifPresent(d -> d.watch.close());
    return ended;
  }

  public Set<String> keys() {
    return drains.keySet();
  }

  @Override
  public void close() {
    drains.values().forEach(d -> d.watch.close());
    drains.clear();
    evictions.shutdownNow();
  }

  /**
   * One watch kept running on a thread of its own, for the drain engine's watches of one kind each
   * (a node's pods, a cluster's nodes or budgets): it resumes from the last resourceVersion seen
   * (objects and bookmarks), starts again from a fresh list after a 410, and after a failure waits
   * 0.25 s, doubling up to 8 s. What a kind does with its objects, how it lists, and when it gives
   * up are its subclass's, called on the loop's thread.
   *
   * <p>Why not client-java's informers: each runs several platform threads; the drains need many
   * differently filtered watches, one virtual thread each here.
   */
  abstract static class WatchLoop<T extends KubernetesObject> implements AutoCloseable {

    /** The server ends each watch after this; the watch is then resumed. */
    static final int WATCH_SECONDS = 120;

    /** Each watch request is bound to its deadline; null: never started (fed by hand, tests). */
    final RawApi api;

    private final Type responseType;
    private final OkHttpClient watchHttp;
    private final Thread thread;
    private volatile boolean closed;
    private volatile Call call;
    private String resourceVersion;

    /** No watch accepted since the last failed try: the server is not reached now. */
    volatile boolean failing;

    /** {@code resourceVersion}: where the first watch starts; null: {@link #relist} first. */
    WatchLoop(RawApi api, Class<T> type, String resourceVersion, String threadName) {
      this.api = api;
      this.responseType = TypeToken.getParameterized(Watch.Response.class, type).getType();
      this.resourceVersion = resourceVersion;
      // The caller's pool, auth and TLS; a watch is silent until something changes, so not the
      // client's short call timeout.
      this.watchHttp =
          api == null
              ? null
              : api.client()
                  .getHttpClient()
                  .newBuilder()
                  .readTimeout(Duration.ofSeconds(WATCH_SECONDS + 30))
                  .callTimeout(Duration.ZERO)
                  .build();
      // Virtual: the loop blocks on its watch's socket most of its life.
      this.thread = Thread.ofVirtual().name(threadName).unstarted(this::run);
    }

    /** The list request the watch is made of (the loop adds the watch's parameters). */
    abstract Call list() throws ApiException;

    /**
     * There is no resourceVersion to resume from (at the start, or after a 410): list, report the
     * full state, and return the list's resourceVersion; or null to watch from the state the server
     * sends.
     */
    abstract String relist() throws ApiException;

    /** An object the watch reported ({@code ADDED}, {@code MODIFIED} or {@code DELETED}). */
    abstract void seen(String type, T object);

    /** A try failed, {@code failures} in a row since a watch was accepted: true ends the loop. */
    abstract boolean giveUp(Exception failure, int failures);

    /** Asked before each watch request: false ends the loop (nobody needs it any more). */
    boolean wanted() {
      return true;
    }

    void startThread() {
      // Watch events are decoded by the client's Gson: without the strict validators.
      LenientJson.install();
      thread.start();
    }

    @Override
    public void close() {
      closed = true;
      Call c = call;
      if (c != null) {
        c.cancel();
      }
      thread.interrupt();
    }

    private void run() {
      int failures = 0;
      while (!closed && wanted()) {
        try {
          if (resourceVersion == null) {
            resourceVersion = relist();
          }
          watchOnce();
          failures = 0;
        } catch (ApiException | RuntimeException e) {
          if (closed) {
            return;
          }
          if (e instanceof ApiException ae && ae.getCode() == 410 && resourceVersion != null) {
            resourceVersion = null;
            continue;
          }
          // A watch that was up before it broke starts a new count.
          failures = failing ? failures + 1 : 1;
          failing = true;
          if (giveUp(e, failures)) {
            return;
          }
          try {
            TimeUnit.MILLISECONDS.sleep(Math.min(8_000L, 250L << Math.min(5, failures - 1)));
          } catch (InterruptedException ie) {
            return;
          }
        }
      }
    }

    /** One watch request, read to its end; a 410 (as answer or as event) is an ApiException. */
    private void watchOnce() throws ApiException {
      Request list = list().request();
      HttpUrl.Builder url =
          list.url()
              .newBuilder()
              .addQueryParameter("watch", "true")
              .addQueryParameter("allowWatchBookmarks", "true")
              .addQueryParameter("timeoutSeconds", String.valueOf(WATCH_SECONDS));
      if (resourceVersion != null) {
        url.addQueryParameter("resourceVersion", resourceVersion);
      }
      Call c = watchHttp.newCall(list.newBuilder().url(url.build()).build());
      api.bound(c);
      call = c;
      if (closed) {
        return;
      }
      try (Watch<T> watch = Watch.createWatch(api.client(), c, responseType)) {
        failing = false;
        while (!closed && watch.hasNext()) {
          handle(watch.next());
        }
      } catch (IOException e) {
        throw new ApiException(e);
      } finally {
        call = null;
      }
    }

    private void handle(Watch.Response<T> event) throws ApiException {
      if ("ERROR".equals(event.type)) {
        int code =
            event.status == null || event.status.getCode() == null ? 0 : event.status.getCode();
        throw new ApiException(
            code, "watch error: " + (event.status == null ? "" : event.status.getReason()));
      }
      T object = event.object;
      if (object == null || object.getMetadata() == null) {
        return;
      }
      if (object.getMetadata().getResourceVersion() != null) {
        resourceVersion = object.getMetadata().getResourceVersion();
      }
      if (!"BOOKMARK".equals(event.type)) {
        seen(event.type, object);
      }
    }

    /** A failed try, for a log line: the API's status, or the failure's kind (no server text). */
    static String describe(Exception failure) {
      return failure instanceof ApiException ae
          ? RawApi.describe(ae)
          : failure.getClass().getSimpleName();
    }
  }

  /**
   * What a stepped drain of one node remembers between its steps: when each pod that could not go
   * yet is due for its next eviction, why it waits, and how many pods left. Pure bookkeeping, no
   * I/O; losing it (a restart) only means due pods are tried again at once.
   *
   * <p>Retry schedule: a pod refused by a budget (or a terminating namespace) is tried again after
   * kubectl's retry interval, and the wait doubles for each further refusal up to {@code maxRetry}:
   * quick while a rolling budget frees a slot, cheap while a budget never allows anything. The API
   * server's Retry-After is honoured as given; transient failures back off from 200 ms.
   *
   * <p>Not thread-safe: the steps of one drain run one at a time (a work queue never hands one key
   * to two workers at once).
   */
  public static final class DrainMemory {

    /**
     * Consecutive transient failures (connection, 5xx) before a pod is reported failed (it is still
     * retried): with the backoff below (0.2 s doubling, at most 5 s) a drain rides out about 30 s
     * of API server outage first.
     */
    static final int MAX_TRANSIENT_FAILURES = 10;

    static final class PodState {
      /** What its last eviction came to (any failure for good: FAILED). */
      Kind waiting;

      Instant due;
      int refusals;
      int transientFailures;
      Set<String> budgets = Set.of();
      String failure;
      boolean denied;

      /** A budget that refused it allows a disruption again: due before its timer. */
      boolean woken;

      /** What the pod's last eviction came to, in words an admin can act on. */
      String why(PodRef pod) {
        return switch (waiting) {
          case ACCEPTED -> "evicted, its deletion not seen yet";
          case BLOCKED ->
              budgets.isEmpty()
                  ? "eviction refused by a PodDisruptionBudget"
                  : "eviction refused by PodDisruptionBudget"
                      + (budgets.size() == 1 ? " " : "s ")
                      // A budget lives in its pod's namespace: named as kubectl users know it.
                      + budgets.stream()
                          .map(b -> b.contains("/") ? b : pod.namespace() + "/" + b)
                          .sorted()
                          .collect(Collectors.joining(", "));
          case THROTTLED -> "eviction throttled by the API server (429 with Retry-After), retrying";
          case NAMESPACE_TERMINATING -> "eviction refused: its namespace is being deleted";
          case TRANSIENT -> "eviction failed, retrying" + (failure == null ? "" : ": " + failure);
          default ->
              // FAILED: a denial's text says what was denied ("create pods/eviction denied: ...").
              denied ? failure : "eviction failed: " + failure;
        };
      }
    }

    private final Duration baseRetry;
    private final Duration maxRetry;
    private final Map<PodRef, PodState> pods = new HashMap<>();
    private final Set<PodRef> evicted = new TreeSet<>();

    /** The eviction API version ("policy/v1"; empty: deletions); null until discovered. */
    Optional<String> evictionVersion;

    private DaemonSetLookup daemonSets;

    /** {@code baseRetry}: the first wait after a refusal (kubectl: 5 s). */
    public DrainMemory(Duration baseRetry, Duration maxRetry) {
      if (baseRetry.isNegative() || baseRetry.isZero() || maxRetry.compareTo(baseRetry) < 0) {
        throw new IllegalArgumentException(
            "need 0 < baseRetry <= maxRetry, got " + baseRetry + ", " + maxRetry);
      }
      this.baseRetry = baseRetry;
      this.maxRetry = maxRetry;
    }

    /** True if the pod may be sent an eviction now: its timer came, or its budget woke it. */
    boolean due(PodRef pod, Instant now) {
      PodState s = pods.get(pod);
      return s == null || s.woken || !now.isBefore(s.due);
    }

    /** True if its timer (not a budget's wake) makes the pod due now, or it was never tried. */
    boolean timerDue(PodRef pod, Instant now) {
      PodState s = pods.get(pod);
      return s == null || !now.isBefore(s.due);
    }

    PodState state(PodRef pod) {
      return pods.get(pod);
    }

    void keepOnly(Set<PodRef> present) {
      pods.keySet().retainAll(present);
    }

    void accepted(PodRef pod, Instant now) {
      PodState s = new PodState();
      pods.put(pod, s);
      s.waiting = Kind.ACCEPTED;
      // The watch shows the deletion within moments; re-send only if it never does.
      s.due = now.plus(baseRetry);
      evicted.add(pod);
    }

    void gone(PodRef pod) {
      pods.remove(pod);
      evicted.add(pod);
    }

    void refused(PodRef pod, Kind why, Set<String> budgets, Instant now) {
      PodState s = waitFor(pod, why, budgets);
      s.due = now.plus(refusalWait(s.refusals++));
    }

    /**
     * Not sent: the known status of {@code budgets} allows no more disruptions now. The pod waits
     * as if refused, for its budget's wake or for its timer (set as a refusal would, if it had
     * come).
     */
    void held(PodRef pod, Set<String> budgets, Instant now) {
      PodState s = waitFor(pod, Kind.BLOCKED, budgets);
      if (s.due == null || !now.isBefore(s.due)) {
        s.due = now.plus(refusalWait(s.refusals++));
      }
    }

    /** A refusal, not a failure. */
    private PodState waitFor(PodRef pod, Kind why, Set<String> budgets) {
      PodState s = pods.computeIfAbsent(pod, p -> new PodState());
      s.waiting = why;
      s.transientFailures = 0;
      s.failure = null;
      s.denied = false;
      s.budgets = Set.copyOf(budgets);
      s.woken = false;
      return s;
    }

    void throttled(PodRef pod, long retryAfterSeconds, Instant now) {
      PodState s = pods.computeIfAbsent(pod, p -> new PodState());
      s.waiting = Kind.THROTTLED;
      s.woken = false;
      s.due = now.plusSeconds(Math.max(1, retryAfterSeconds));
    }

    /** True once the pod failed this often in a row that it is reported failed. */
    boolean transientFailure(PodRef pod, String message, Instant now) {
      PodState s = pods.computeIfAbsent(pod, p -> new PodState());
      s.transientFailures++;
      s.woken = false;
      // Kept for the messages that say why the pod is still there.
      s.failure = message;
      s.due = now.plusMillis(Math.min(5_000L, 200L << Math.min(20, s.transientFailures - 1)));
      if (s.transientFailures > MAX_TRANSIENT_FAILURES) {
        s.waiting = Kind.FAILED;
        return true;
      }
      s.waiting = Kind.TRANSIENT;
      return false;
    }

    /** Retrying cannot help soon: reported failed, tried again after the longest wait. */
    void failed(PodRef pod, String reason, boolean denied, Instant now) {
      PodState s = pods.computeIfAbsent(pod, p -> new PodState());
      s.waiting = Kind.FAILED;
      s.failure = reason;
      s.denied = denied;
      s.woken = false;
      s.due = now.plus(maxRetry);
    }

    /**
     * The budgets {@code namespace/name} allow a disruption now: the pods they refused are due at
     * once (their refusal count and timer stay, so a budget that refuses again backs off as before,
     * and a pod the step does not send, its budget's disruptions taken by others, waits for its
     * timer).
     */
    public void budgetsAllow(Set<String> budgets) {
      if (budgets.isEmpty()) {
        return;
      }
      pods.forEach(
          (pod, s) -> {
            if (s.waiting == Kind.BLOCKED
                && s.budgets.stream()
                    .anyMatch(
                        b -> budgets.contains(b.contains("/") ? b : pod.namespace() + "/" + b))) {
              s.woken = true;
            }
          });
    }

    /** 5 s, 10 s, 20 s, ... up to the maximum. */
    Duration refusalWait(int earlierRefusals) {
      Duration wait = baseRetry.multipliedBy(1L << Math.min(earlierRefusals, 30));
      return wait.compareTo(maxRetry) > 0 ? maxRetry : wait;
    }

    /** Pods evicted (or found gone) so far. */
    public int evictedCount() {
      return evicted.size();
    }

    /** Evictions, unless disabled or (as discovered by the first request) not served. */
    boolean usingEviction(DrainOptions options) {
      return evictionVersion != null ? evictionVersion.isPresent() : !options.disableEviction();
    }

    DaemonSetLookup daemonSets(Supplier<DaemonSetLookup> create) {
      if (daemonSets == null) {
        daemonSets = create.get();
      }
      return daemonSets;
    }
  }

  /**
   * The pods bound to one node, kept current by one list and one watch (field selector {@code
   * spec.nodeName}), for a drain that is carried out in steps: each step reads the pods from here
   * instead of listing them, and {@code onPodsLeft} is called whenever pods leave the node (or the
   * watch gave up), and only then, so the drain's next step comes as soon as there is something new
   * and a drain whose pods stay (a budget refuses) is not woken for nothing.
   *
   * <p>One thread each ({@link WatchLoop}), not a GET per pod per second as kubectl does. Repeated
   * failures to reach the server end it ({@link #failure}).
   */
  public static final class NodePodWatch extends WatchLoop<V1Pod> {
    private static final Logger LOG = LoggerFactory.getLogger(NodePodWatch.class);

    /** Consecutive failures (backoff 0.25 s doubling, at most 8 s: ~30 s in all). */
    private static final int MAX_FAILURES = 9;

    private final String node;
    private final Runnable onPodsLeft;
    private final Map<String, V1Pod> pods = new LinkedHashMap<>();
    private boolean listed;
    private String failure;

    /** A null {@code api}: fed by hand, for tests. */
    NodePodWatch(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
      super(api, V1Pod.class, resourceVersion(seed), "drain-watch-" + node);
      this.node = node;
      this.onPodsLeft = onPodsLeft;
      if (resourceVersion(seed) != null) {
        // The caller's own list: the watch starts right after it, instead of listing again.
        if (seed.getItems() != null) {
          seed.getItems().forEach(p -> pods.put(key(p), p));
        }
        listed = true;
      }
    }

    private static String resourceVersion(V1PodList list) {
      return list == null || list.getMetadata() == null
          ? null
          : list.getMetadata().getResourceVersion();
    }

    /** Starts following the node's pods, listing them on the watch's thread. */
    public static NodePodWatch start(ApiClient client, String node, Runnable onPodsLeft) {
      return start(new RawApi(client), node, onPodsLeft, null);
    }

    /**
     * As {@link #start(ApiClient, String, Runnable)}, resuming from a list of the node's pods the
     * caller has just made (one list for the drain's first step and the watch; null, or no
     * resourceVersion: the watch lists itself). Each request is bound to {@code api}'s deadline.
     */
    static NodePodWatch start(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
      NodePodWatch w = new NodePodWatch(api, node, onPodsLeft, seed);
      w.startThread();
      return w;
    }

    /** The node's pods now; empty until the first list arrived, and after the watch gave up. */
    public synchronized Optional<List<V1Pod>> pods() {
      if (!listed || failure != null) {
        return Optional.empty();
      }
      return Optional.of(new ArrayList<>(pods.values()));
    }

    /** Why the watch gave up (it does after about 30 s of failures), if it did. */
    public synchronized Optional<String> failure() {
      return Optional.ofNullable(failure);
    }

    @Override
    Call list() throws ApiException {
      return new CoreV1Api(api.client())
          .listPodForAllNamespaces()
          .fieldSelector("spec.nodeName=" + node)
          .buildCall(null);
    }

    @Override
    String relist() throws ApiException {
      V1PodList listed = listPods(api, node, "", DrainOptions.DEFAULT_CHUNK_SIZE);
      LOG.debug("pods listed node={} pods={}", node, listed.getItems().size());
      relisted(listed.getItems());
      return listed.getMetadata().getResourceVersion();
    }

    @Override
    void seen(String type, V1Pod pod) {
      boolean deleted = "DELETED".equals(type);
      synchronized (this) {
        if (deleted) {
          pods.remove(key(pod));
        } else {
          pods.put(key(pod), pod);
        }
      }
      if (deleted) {
        onPodsLeft.run();
      }
    }

    @Override
    boolean giveUp(Exception failure, int failures) {
      String reason = describe(failure);
      if (failures >= MAX_FAILURES) {
        LOG.warn("pod watch gave up node={} failures={} reason={}", node, failures, reason);
        watchFailed("lost the watch on the pods of node " + node + ": " + reason);
        return true;
      }
      LOG.debug("pod watch failed, retrying node={} failures={} reason={}", node, failures, reason);
      return false;
    }

    /** The full current list after a relist: any pod tracked but not in it is gone. */
    void relisted(List<V1Pod> current) {
      boolean left;
      synchronized (this) {
        Map<String, V1Pod> now = new LinkedHashMap<>();
        current.forEach(p -> now.put(key(p), p));
        // The first list says nothing left unless the node is empty (pods gone before it are then
        // all gone: what the drain waits for); a later one, when a pod known before is missing.
        left = now.isEmpty() || (listed && !now.keySet().containsAll(pods.keySet()));
        pods.clear();
        pods.putAll(now);
        listed = true;
      }
      if (left) {
        onPodsLeft.run();
      }
    }

    void watchFailed(String reason) {
      synchronized (this) {
        failure = reason;
      }
      onPodsLeft.run();
    }

    private static String key(V1Pod pod) {
      return PodRef.of(pod).toString();
    }
  }

  /**
   * All pods on {@code node} matching {@code labelSelector} (empty: all), page by page. The pages
   * form one consistent snapshot, whose resourceVersion the list carries for a watch to resume
   * from. A continue token expires after a few minutes: a list that slow restarts, a few times.
   */
  public static V1PodList listPods(RawApi api, String node, String labelSelector, int chunkSize)
      throws ApiException {
    CoreV1Api core = new CoreV1Api(api.client());
    V1PodList all = new V1PodList().metadata(new V1ListMeta()).items(new ArrayList<>());
    String token = null;
    for (int restarts = 0; ; ) {
      V1PodList page;
      try {
        page =
            api.get(
                core.listPodForAllNamespaces()
                    .fieldSelector("spec.nodeName=" + node)
                    .labelSelector(labelSelector.isEmpty() ? null : labelSelector)
                    .limit(chunkSize > 0 ? chunkSize : null)
                    ._continue(token)
                    .buildCall(null),
                V1PodList.class);
      } catch (ApiException e) {
        if (e.getCode() != 410 || restarts++ >= 3) {
          throw e;
        }
        // 410 Expired: the snapshot behind the continue token is gone; start a fresh one.
        all = new V1PodList().metadata(new V1ListMeta()).items(new ArrayList<>());
        token = null;
        continue;
      }
      if (page.getItems() != null) {
        all.getItems().addAll(page.getItems());
      }
      if (all.getMetadata().getResourceVersion() == null && page.getMetadata() != null) {
        all.getMetadata().setResourceVersion(page.getMetadata().getResourceVersion());
      }
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
      if (token == null || token.isEmpty()) {
        return all;
      }
    }
  }
}
