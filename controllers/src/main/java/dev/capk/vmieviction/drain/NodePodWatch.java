package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The pods bound to one node, kept current by one list and one watch (field selector {@code
 * spec.nodeName}), for a drain that is carried out in steps: each step reads the pods from here
 * instead of listing them, and {@code onPodsLeft} is called whenever pods leave the node (or the
 * watch gave up), and only then, so the drain's next step comes as soon as there is something new
 * and a drain whose pods stay (a budget refuses) is not woken for nothing.
 *
 * <p>Why not a client-java informer: a {@code SharedInformerFactory} keeps one informer per type,
 * and each informer runs several threads; a drain of hundreds of nodes at once needs hundreds of
 * differently filtered pod watches, one thread each here ({@link DeletionWaiter}'s).
 */
public final class NodePodWatch implements AutoCloseable, DeletionWaiter.Events {

  private final String node;
  private final Runnable onPodsLeft;
  private final DeletionWaiter waiter;
  private final Map<String, V1Pod> pods = new LinkedHashMap<>();
  private boolean listed;
  private String failure;

  private NodePodWatch(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
    this.node = node;
    this.onPodsLeft = onPodsLeft;
    String from = null;
    if (seed != null && seed.getMetadata() != null) {
      from = seed.getMetadata().getResourceVersion();
    }
    if (from != null) {
      // The caller's own list: the watch starts right after it, instead of listing again.
      pods.clear();
      if (seed.getItems() != null) {
        seed.getItems().forEach(p -> pods.put(key(p), p));
      }
      listed = true;
    }
    // No resourceVersion: the waiter lists first, then watches from that list's version.
    this.waiter = new DeletionWaiter(api, new PodLister(api), node, from, this);
  }

  /** Fed by hand, for tests of what it reports. */
  NodePodWatch(String node, Runnable onPodsLeft) {
    this.node = node;
    this.onPodsLeft = onPodsLeft;
    this.waiter = null;
  }

  /** Starts following the node's pods; the first list arrives on the watch's own thread. */
  public static NodePodWatch start(ApiClient client, String node, Runnable onPodsLeft) {
    return start(client, node, onPodsLeft, null);
  }

  /**
   * As {@link #start(ApiClient, String, Runnable)}, from a list of the node's pods the caller has
   * just made (field selector {@code spec.nodeName}, all namespaces): the watch resumes from its
   * resourceVersion and {@link #pods()} answers from it at once, so the drain's first step and the
   * watch share one list. Null, or a list without a resourceVersion: the watch lists itself.
   */
  public static NodePodWatch start(
      ApiClient client, String node, Runnable onPodsLeft, V1PodList seed) {
    return start(new RawApi(client), node, onPodsLeft, seed);
  }

  /** As the public one, each watch request bound to {@code api}'s deadline (a blocking drain's). */
  static NodePodWatch start(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
    NodePodWatch w = new NodePodWatch(api, node, onPodsLeft, seed);
    w.waiter.start();
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
    return failure != null || (waiter != null && waiter.failing());
  }

  /** Why the watch gave up (it does after about 30 s of failures), if it did. */
  public synchronized Optional<String> failure() {
    return Optional.ofNullable(failure);
  }

  @Override
  public void podSeen(V1Pod pod) {
    synchronized (this) {
      pods.put(key(pod), pod);
    }
  }

  @Override
  public void podDeleted(V1Pod pod) {
    synchronized (this) {
      pods.remove(key(pod));
    }
    onPodsLeft.run();
  }

  @Override
  public void relisted(List<V1Pod> current) {
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

  @Override
  public void watchFailed(String reason) {
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
    if (waiter != null) {
      waiter.close();
    }
  }
}
