package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import java.util.List;
import okhttp3.Call;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the pods of one node with a single watch (not a GET per pod per second, as kubectl does)
 * and reports what happens to them. The watch ({@link WatchLoop}) resumes from the last
 * resourceVersion seen; when the server answers 410 (that version is too old) it relists and
 * reports the full state. Repeated failures to reach the server end it with {@link
 * Events#watchFailed}.
 */
final class DeletionWaiter implements AutoCloseable, WatchLoop.Kind<V1Pod> {
  private static final Logger LOG = LoggerFactory.getLogger(DeletionWaiter.class);

  /** Consecutive failures (backoff 0.25 s doubling, at most 8 s: ~30 s in all) before giving up. */
  private static final int MAX_FAILURES = 9;

  /** Receives what the watch sees. Called from the watch thread. */
  interface Events {
    void podSeen(V1Pod pod);

    void podDeleted(V1Pod pod);

    /** The full current list after a relist: any pod tracked but not in it is gone. */
    void relisted(List<V1Pod> pods);

    void watchFailed(String reason);
  }

  private final PodLister lister;
  private final String node;
  private final Events events;
  private final WatchLoop<V1Pod> loop;

  /**
   * @param resourceVersion the version of the list the tracked pods came from; the watch starts
   *     right after it (null: it lists first)
   */
  DeletionWaiter(RawApi api, PodLister lister, String node, String resourceVersion, Events events) {
    this.lister = lister;
    this.node = node;
    this.events = events;
    // Bounded by the drain's deadline (through the api) rather than by the client's call timeout.
    this.loop = new WatchLoop<>(api, this, resourceVersion, "drain-watch-" + node);
  }

  /** The pod watch's server is not reached now (see {@link WatchLoop#failing()}). */
  boolean failing() {
    return loop.failing();
  }

  DeletionWaiter start() {
    loop.start();
    return this;
  }

  @Override
  public void close() {
    loop.close();
  }

  @Override
  public Call watch(ApiClient client, String resourceVersion) throws ApiException {
    return new CoreV1Api(client)
        .listPodForAllNamespaces()
        .fieldSelector(PodLister.nodeFieldSelector(node))
        .watch(true)
        .allowWatchBookmarks(true)
        .resourceVersion(resourceVersion)
        .timeoutSeconds(WatchLoop.WATCH_SECONDS)
        .buildCall(null);
  }

  @Override
  public String relist() throws ApiException {
    PodLister.Listing listing = lister.list(node, "", DrainOptions.DEFAULT_CHUNK_SIZE);
    LOG.debug("pods listed node={} pods={}", node, listing.pods().size());
    events.relisted(listing.pods());
    return listing.resourceVersion();
  }

  @Override
  public Class<V1Pod> objectType() {
    return V1Pod.class;
  }

  @Override
  public void seen(String type, V1Pod pod) {
    if ("DELETED".equals(type)) {
      events.podDeleted(pod);
    } else {
      events.podSeen(pod);
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
      events.watchFailed("lost the watch on the pods of node " + node + ": " + reason);
      return true;
    }
    LOG.debug("pod watch failed, retrying node={} failures={} reason={}", node, failures, reason);
    return false;
  }
}
