package dev.capk.vmieviction.drain;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import okio.BufferedSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the pods of one node with a single watch (not a GET per pod per second, as kubectl does)
 * and reports what happens to them. The watch resumes from the last resourceVersion seen; when the
 * server answers 410 (that version is too old) it relists and reports the full state. Repeated
 * failures to reach the server end it with {@link Events#watchFailed}.
 */
final class DeletionWaiter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DeletionWaiter.class);

  /** The server ends each watch after this; the watch is then resumed. */
  private static final int WATCH_SECONDS = 120;

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

  /** The watch's resourceVersion is too old: relist. */
  private static final class Expired extends Exception {
    private static final long serialVersionUID = 1L;
  }

  private final RawApi api;
  private final PodLister lister;
  private final String node;
  private final Events events;
  private final OkHttpClient watchHttp;
  private final Thread thread;
  private volatile boolean closed;
  private volatile Call current;
  private String resourceVersion;

  /** Whether the current watch request was accepted (only the watch thread uses it). */
  private boolean connected;

  /**
   * @param resourceVersion the version of the list the tracked pods came from; the watch starts
   *     right after it
   */
  DeletionWaiter(RawApi api, PodLister lister, String node, String resourceVersion, Events events) {
    this.api = api;
    this.lister = lister;
    this.node = node;
    this.events = events;
    this.resourceVersion = resourceVersion;
    // Same connection pool, auth interceptors and TLS as the caller's client; only the timeouts
    // differ:
    // a watch is silent until something happens, and it lives as long as the drain, so it is
    // bounded
    // by the drain's deadline (through the api) rather than by the client's short call timeout.
    this.watchHttp =
        api.client()
            .getHttpClient()
            .newBuilder()
            .readTimeout(Duration.ofSeconds(WATCH_SECONDS + 30))
            .callTimeout(Duration.ZERO)
            .build();
    this.thread = new Thread(this::run, "drain-watch-" + node);
    this.thread.setDaemon(true);
  }

  DeletionWaiter start() {
    thread.start();
    return this;
  }

  @Override
  public void close() {
    closed = true;
    Call c = current;
    if (c != null) {
      c.cancel();
    }
    thread.interrupt();
  }

  private void run() {
    int failures = 0;
    while (!closed) {
      connected = false;
      try {
        if (resourceVersion == null) {
          PodLister.Listing listing = lister.list(node, "", DrainOptions.DEFAULT_CHUNK_SIZE);
          LOG.debug("pods listed node={} pods={}", node, listing.pods().size());
          events.relisted(listing.pods());
          resourceVersion = listing.resourceVersion();
        }
        if (watchOnce()) {
          failures = 0;
        }
      } catch (Expired e) {
        LOG.debug("pod watch expired, relisting node={}", node);
        resourceVersion = null;
      } catch (IOException | ApiException | RuntimeException e) {
        if (closed) {
          return;
        }
        if (connected) {
          // The watch was up before it broke: a new outage, not one more failure of the last.
          failures = 0;
        }
        failures++;
        String reason =
            e instanceof ApiException ae ? ApiStatus.describe(ae) : String.valueOf(e.getMessage());
        if (failures >= MAX_FAILURES) {
          LOG.warn("pod watch gave up node={} failures={} reason={}", node, failures, reason);
          events.watchFailed("lost the watch on the pods of node " + node + ": " + reason);
          return;
        }
        LOG.debug(
            "pod watch failed, retrying node={} failures={} reason={}", node, failures, reason);
        if (!sleep(Math.min(8_000L, 250L << (failures - 1)))) {
          return;
        }
      }
    }
  }

  /** One watch request, read to its end. @return true if the server accepted it */
  private boolean watchOnce() throws IOException, ApiException, Expired {
    Call built =
        new CoreV1Api(api.client())
            .listPodForAllNamespaces()
            .fieldSelector(PodLister.nodeFieldSelector(node))
            .watch(true)
            .allowWatchBookmarks(true)
            .resourceVersion(resourceVersion)
            .timeoutSeconds(WATCH_SECONDS)
            .buildCall(null);
    Call call = watchHttp.newCall(built.request());
    api.bound(call);
    current = call;
    if (closed) {
      return false;
    }
    try (Response response = call.execute()) {
      if (response.code() == 410) {
        throw new Expired();
      }
      if (!response.isSuccessful()) {
        String body = response.body() == null ? "" : response.body().string();
        throw new RawApi.Answer(response.code(), body, response.headers().toMultimap())
            .toException();
      }
      connected = true;
      BufferedSource source = response.body().source();
      String line;
      while (!closed && (line = source.readUtf8Line()) != null) {
        if (!line.isBlank()) {
          handle(line);
        }
      }
      return true;
    } finally {
      current = null;
    }
  }

  private void handle(String line) throws Expired, IOException {
    JsonObject event = JsonParser.parseString(line).getAsJsonObject();
    String type = event.get("type").getAsString();
    JsonElement object = event.get("object");
    if ("ERROR".equals(type)) {
      JsonObject status =
          object != null && object.isJsonObject() ? object.getAsJsonObject() : new JsonObject();
      int code = status.has("code") ? status.get("code").getAsInt() : 0;
      if (code == 410) {
        throw new Expired();
      }
      throw new IOException("watch error: " + ApiStatus.parse(code, status.toString()).message());
    }
    if ("BOOKMARK".equals(type)) {
      resourceVersion =
          object.getAsJsonObject().getAsJsonObject("metadata").get("resourceVersion").getAsString();
      return;
    }
    V1Pod pod = LenientJson.parse(object, V1Pod.class);
    if (pod.getMetadata() != null && pod.getMetadata().getResourceVersion() != null) {
      resourceVersion = pod.getMetadata().getResourceVersion();
    }
    if ("DELETED".equals(type)) {
      events.podDeleted(pod);
    } else {
      events.podSeen(pod);
    }
  }

  private boolean sleep(long millis) {
    try {
      TimeUnit.MILLISECONDS.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      return false;
    }
  }
}
