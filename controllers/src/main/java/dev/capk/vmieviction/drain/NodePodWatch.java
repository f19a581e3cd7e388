package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.Call;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pods bound to one node, kept current by one list and one watch (field selector {@code
 * spec.nodeName}), for a drain that is carried out in steps: each step reads the pods from here
 * instead of listing them, and {@code onPodsLeft} is called whenever pods leave the node (or the
 * watch gave up), and only then, so the drain's next step comes as soon as there is something new
 * and a drain whose pods stay (a budget refuses) is not woken for nothing.
 *
 * <p>Why not a client-java informer: a {@code SharedInformerFactory} keeps one informer per type,
 * and each informer runs several threads; a drain of hundreds of nodes at once needs hundreds of
 * differently filtered pod watches, one thread each here ({@link WatchLoop}'s: a single watch, not
 * a GET per pod per second as kubectl does). Repeated failures to reach the server end it ({@link
 * #failure}).
 */
public final class NodePodWatch implements AutoCloseable, WatchLoop.Kind<V1Pod> {
  private static final Logger LOG = LoggerFactory.getLogger(NodePodWatch.class);

  /** Consecutive failures (backoff 0.25 s doubling, at most 8 s: ~30 s in all) before giving up. */
  private static final int MAX_FAILURES = 9;

  private final String node;
  private final Runnable onPodsLeft;
  private final PodLister lister;
  private final WatchLoop<V1Pod> loop;
  private final Map<String, V1Pod> pods = new LinkedHashMap<>();
  private boolean listed;
  private String failure;

  private NodePodWatch(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
    this.node = node;
    this.onPodsLeft = onPodsLeft;
    String from =
        seed == null || seed.getMetadata() == null ? null : seed.getMetadata().getResourceVersion();
    if (from != null) {
      // The caller's own list: the watch starts right after it, instead of listing again.
      if (seed.getItems() != null) {
        seed.getItems().forEach(p -> pods.put(key(p), p));
      }
      listed = true;
    }
    this.lister = new PodLister(api);
    // No resourceVersion: the loop lists first, then watches from that list's version. Each watch
    // request is bounded by the api's deadline rather than by the client's call timeout.
    this.loop = new WatchLoop<>(api, this, from, "drain-watch-" + node);
  }

  /** Fed by hand, for tests of what it reports. */
  NodePodWatch(String node, Runnable onPodsLeft) {
    this.node = node;
    this.onPodsLeft = onPodsLeft;
    this.lister = null;
    this.loop = null;
  }

  /** Starts following the node's pods; the first list arrives on the watch's own thread. */
  public static NodePodWatch start(ApiClient client, String node, Runnable onPodsLeft) {
    return start(new RawApi(client), node, onPodsLeft, null);
  }

  /**
   * As {@link #start(ApiClient, String, Runnable)}, from a list of the node's pods the caller has
   * just made (field selector {@code spec.nodeName}, all namespaces): the watch resumes from its
   * resourceVersion and {@link #pods()} answers from it at once, so the drain's first step and the
   * watch share one list. Null, or a list without a resourceVersion: the watch lists itself. Each
   * watch request is bound to {@code api}'s deadline (a blocking drain's).
   */
  static NodePodWatch start(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
    NodePodWatch w = new NodePodWatch(api, node, onPodsLeft, seed);
    w.loop.start();
    return w;
  }

  public String node() {
    return node;
  }

  /** The node's pods now; empty until the first list arrived, and after the watch gave up. */
  public synchronized Optional<List<V1Pod>> pods() {
    if (!listed || failure != null) {
      return Optional.empty();
    }
    return Optional.of(new ArrayList<>(pods.values()));
  }

  /**
   * The guest API server is not reached now: the watch gave up, or its last try failed and none was
   * accepted since. What this watch knows may be stale.
   */
  public synchronized boolean unreachable() {
    return failure != null || (loop != null && loop.failing());
  }

  /** Why the watch gave up (it does after about 30 s of failures), if it did. */
  public synchronized Optional<String> failure() {
    return Optional.ofNullable(failure);
  }

  @Override
  public Class<V1Pod> objectType() {
    return V1Pod.class;
  }

  @Override
  public Call list(ApiClient client) throws ApiException {
    return new CoreV1Api(client)
        .listPodForAllNamespaces()
        .fieldSelector(PodLister.nodeFieldSelector(node))
        .buildCall(null);
  }

  @Override
  public String relist() throws ApiException {
    PodLister.Listing listing = lister.list(node, "", DrainOptions.DEFAULT_CHUNK_SIZE);
    LOG.debug("pods listed node={} pods={}", node, listing.pods().size());
    relisted(listing.pods());
    return listing.resourceVersion();
  }

  @Override
  public void seen(String type, V1Pod pod) {
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
  public boolean giveUp(Exception failure, int failures) {
    String reason =
        failure instanceof ApiException ae
            ? ApiStatus.describe(ae)
            : String.valueOf(failure.getMessage());
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
    PodRef ref = PodRef.of(pod);
    return ref.namespace() + "/" + ref.name();
  }

  @Override
  public void close() {
    if (loop != null) {
      loop.close();
    }
  }
}
