package dev.capk.vmieviction.drain;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.stream.JsonReader;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.io.IOException;
import java.io.StringReader;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okio.BufferedSource;

/**
 * One raw watch kept running on a thread of its own, for the drain engine's watches of one kind
 * each (a node's pods, a cluster's budgets): it resumes from the last resourceVersion seen (objects
 * and bookmarks), starts again from a fresh list when the server answers 410 (that version is too
 * old), and after a failure waits 0.25 s, doubling up to 8 s, before the next try; {@link #close}
 * cancels the request under way. What a kind does with its objects, how it lists, and when it gives
 * up are its {@link Kind}'s.
 *
 * <p>Why not client-java's informers: one informer per type and several threads each; the drains
 * need many differently filtered watches, one thread each here.
 */
final class WatchLoop<T extends KubernetesObject> implements AutoCloseable {

  /** The server ends each watch after this; the watch is then resumed. */
  static final int WATCH_SECONDS = 120;

  /** What one kind of watch does. Called on the loop's thread. */
  interface Kind<T extends KubernetesObject> {
    /** The objects' type, decoded straight from the watch's lines. */
    Class<T> objectType();

    /**
     * The list request the watch is made of: the loop adds the watch's parameters (bookmarks, its
     * resourceVersion, its timeout).
     */
    Call list(ApiClient client) throws ApiException;

    /**
     * There is no resourceVersion to resume from (at the start, or after a 410): list, report the
     * full state, and return the list's resourceVersion; or null to watch from the state the server
     * sends.
     */
    String relist() throws ApiException;

    /** An object the watch reported ({@code ADDED}, {@code MODIFIED} or {@code DELETED}). */
    void seen(String type, T object);

    /**
     * A try failed ({@code failures} in a row, counting since the watch was last accepted): true to
     * end the loop, false to try again after the backoff.
     */
    boolean giveUp(Exception failure, int failures);

    /** Asked before each watch request: false ends the loop (nobody needs it any more). */
    default boolean wanted() {
      return true;
    }
  }

  /** The watch's resourceVersion is too old: start again from a list. */
  private static final class Expired extends Exception {
    private static final long serialVersionUID = 1L;
  }

  private final RawApi api;
  private final Kind<T> kind;
  private final OkHttpClient watchHttp;
  private final Thread thread;
  private volatile boolean closed;
  private volatile Call current;
  private String resourceVersion;

  /** Whether the current watch request was accepted (only the loop's thread uses it). */
  private boolean connected;

  /** The last try failed and no watch has been accepted since: the server is not reached now. */
  private volatile boolean failing;

  /**
   * @param api each watch request is bound to its deadline
   * @param resourceVersion where the first watch starts; null: {@link Kind#relist} first
   * @param threadName names the loop's thread
   */
  WatchLoop(RawApi api, Kind<T> kind, String resourceVersion, String threadName) {
    this.api = api;
    this.kind = kind;
    this.resourceVersion = resourceVersion;
    // The caller's connection pool, auth and TLS; a watch is silent until something changes, so
    // not the client's short call timeout.
    this.watchHttp =
        api.client()
            .getHttpClient()
            .newBuilder()
            .readTimeout(Duration.ofSeconds(WATCH_SECONDS + 30))
            .callTimeout(Duration.ZERO)
            .build();
    this.thread = new Thread(this::run, threadName);
    this.thread.setDaemon(true);
  }

  /**
   * True while the server is not reached: the last try failed and no watch was accepted since
   * (between retries, before the loop gives up).
   */
  boolean failing() {
    return failing;
  }

  WatchLoop start() {
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
    while (!closed && kind.wanted()) {
      connected = false;
      try {
        if (resourceVersion == null) {
          resourceVersion = kind.relist();
        }
        if (watchOnce()) {
          failures = 0;
        }
      } catch (Expired e) {
        resourceVersion = null;
      } catch (IOException | ApiException | RuntimeException e) {
        if (closed) {
          return;
        }
        failing = true;
        if (connected) {
          // The watch was up before it broke: a new outage, not one more failure of the last.
          failures = 0;
        }
        failures++;
        if (kind.giveUp(e, failures)) {
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

  /** One watch request, read to its end. @return true if the server accepted it */
  private boolean watchOnce() throws IOException, ApiException, Expired {
    Request list = kind.list(api.client()).request();
    HttpUrl.Builder url =
        list.url()
            .newBuilder()
            .addQueryParameter("watch", "true")
            .addQueryParameter("allowWatchBookmarks", "true")
            .addQueryParameter("timeoutSeconds", String.valueOf(WATCH_SECONDS));
    if (resourceVersion != null) {
      // Null: the server sends the state first.
      url.addQueryParameter("resourceVersion", resourceVersion);
    }
    Call call = watchHttp.newCall(list.newBuilder().url(url.build()).build());
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
      failing = false;
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

  /**
   * One line of the watch, decoded in one pass: the API server writes {@code type} before {@code
   * object}, so the object is read straight into its type, not first into a JSON tree (a pod is a
   * few kB, and a drain sees each of its pods change several times). Errors and bookmarks, and a
   * line in another order, go through the tree.
   */
  private void handle(String line) throws Expired, IOException {
    String type = null;
    T object = null;
    JsonElement raw = null;
    try (JsonReader reader = new JsonReader(new StringReader(line))) {
      reader.beginObject();
      while (reader.hasNext()) {
        String name = reader.nextName();
        if ("type".equals(name)) {
          type = reader.nextString();
        } else if ("object".equals(name)) {
          if (type != null && !"ERROR".equals(type) && !"BOOKMARK".equals(type)) {
            object = LenientJson.GSON.fromJson(reader, kind.objectType());
          } else {
            raw = JsonParser.parseReader(reader);
          }
        } else {
          reader.skipValue();
        }
      }
      reader.endObject();
    }
    if (type == null) {
      throw new IOException("watch event without a type");
    }
    if ("ERROR".equals(type)) {
      JsonObject status =
          raw != null && raw.isJsonObject() ? raw.getAsJsonObject() : new JsonObject();
      int code = status.has("code") ? status.get("code").getAsInt() : 0;
      if (code == 410) {
        throw new Expired();
      }
      throw new IOException("watch error: " + ApiStatus.parse(code, status.toString()).message());
    }
    if ("BOOKMARK".equals(type)) {
      String version = resourceVersionOf(raw);
      if (version != null) {
        resourceVersion = version;
      }
      return;
    }
    if (object == null && raw != null) {
      object = LenientJson.GSON.fromJson(raw, kind.objectType());
    }
    if (object == null || object.getMetadata() == null) {
      return;
    }
    if (object.getMetadata().getResourceVersion() != null) {
      resourceVersion = object.getMetadata().getResourceVersion();
    }
    kind.seen(type, object);
  }

  /** A failed try, for a log line: the API's status, or the failure's kind (never server text). */
  static String describe(Exception failure) {
    return failure instanceof ApiException ae
        ? ApiStatus.describe(ae)
        : failure.getClass().getSimpleName();
  }

  private static String resourceVersionOf(JsonElement object) {
    if (object == null || !object.isJsonObject()) {
      return null;
    }
    JsonElement metadata = object.getAsJsonObject().get("metadata");
    if (metadata == null || !metadata.isJsonObject()) {
      return null;
    }
    JsonElement version = metadata.getAsJsonObject().get("resourceVersion");
    return version != null && version.isJsonPrimitive() ? version.getAsString() : null;
  }
}
