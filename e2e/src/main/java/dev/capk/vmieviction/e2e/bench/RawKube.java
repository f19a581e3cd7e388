package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Plain JSON requests to a local cluster's API server with its admin client: fast set-up of many
 * objects.
 */
final class RawKube {
  static final MediaType JSON = MediaType.get("application/json");
  static final MediaType MERGE = MediaType.get("application/merge-patch+json");

  private final String server;
  private final OkHttpClient http;
  private final OkHttpClient streaming;

  RawKube(LocalCluster cluster) {
    this.server = cluster.serverUrl();
    this.http =
        cluster.client().getHttpClient().newBuilder().readTimeout(60, TimeUnit.SECONDS).build();
    this.streaming = http.newBuilder().readTimeout(0, TimeUnit.MILLISECONDS).build();
  }

  /**
   * The body of a successful request; anything else throws with the status and the start of the
   * body.
   */
  String call(String method, String path, MediaType type, String body) throws IOException {
    Request.Builder b = new Request.Builder().url(server + path);
    b.method(method, body == null ? null : RequestBody.create(body, type));
    for (int attempt = 1; ; attempt++) {
      try (Response r = http.newCall(b.build()).execute()) {
        String text = r.body() == null ? "" : r.body().string();
        if (r.isSuccessful()) {
          return text;
        }
        // A CRD's storage still initialising answers 429; the server asks us to come back.
        if ((r.code() == 429 || r.code() >= 500) && attempt < 20) {
          ControllerProcess.sleep(250L * attempt);
          continue;
        }
        throw new IOException(
            method
                + " "
                + path
                + ": HTTP "
                + r.code()
                + " "
                + text.substring(0, Math.min(300, text.length())));
      }
    }
  }

  String get(String path) throws IOException {
    return call("GET", path, null, null);
  }

  JsonObject getJson(String path) throws IOException {
    return JsonParser.parseString(get(path)).getAsJsonObject();
  }

  String post(String path, String json) throws IOException {
    return call("POST", path, JSON, json);
  }

  /**
   * Creates namespace {@code ns} (one that exists already is kept) and waits until its default
   * ServiceAccount exists, which pods need before they can be created; {@code withAccount}: creates
   * that account too (where no kube-controller-manager does).
   */
  void createNamespace(String ns, boolean withAccount) throws Exception {
    postIfAbsent("/api/v1/namespaces", "{\"metadata\":{\"name\":\"" + ns + "\"}}");
    if (withAccount) {
      postIfAbsent(
          "/api/v1/namespaces/" + ns + "/serviceaccounts", "{\"metadata\":{\"name\":\"default\"}}");
    }
    Await.until(
        "ServiceAccount default in " + ns,
        Duration.ofSeconds(60),
        () -> {
          get("/api/v1/namespaces/" + ns + "/serviceaccounts/default");
          return true;
        });
  }

  /** POSTs {@code json}; an object that exists already (409) is kept. */
  private void postIfAbsent(String path, String json) throws IOException {
    try {
      post(path, json);
    } catch (IOException e) {
      if (!e.getMessage().contains("HTTP 409")) {
        throw e;
      }
    }
  }

  String mergePatch(String path, String json) throws IOException {
    return call("PATCH", path, MERGE, json);
  }

  /**
   * Streams a watch of a whole collection ({@code collectionPath} without a query) on a daemon
   * thread, from now on, handing each event (type, object) to {@code onEvent} with the local
   * receive time in nanoseconds; closing the returned handle stops it. Resumed when the server ends
   * the stream (an API server drops a watcher that falls behind a burst of events): watches again
   * from the last resourceVersion seen, or, when that is too old (410), lists afresh and hands each
   * item over as MODIFIED. {@code onResume} is told each time: events seen after a resume may carry
   * a later receive time than they would have.
   */
  AutoCloseable watchResuming(String collectionPath, WatchListener onEvent, Runnable onResume)
      throws IOException {
    java.util.concurrent.atomic.AtomicReference<String> rv =
        new java.util.concurrent.atomic.AtomicReference<>(listVersion(collectionPath + "?limit=1"));
    java.util.concurrent.atomic.AtomicBoolean closed =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<okhttp3.Call> current =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              while (!closed.get()) {
                okhttp3.Call call =
                    streaming.newCall(
                        new Request.Builder()
                            .url(
                                server
                                    + collectionPath
                                    + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=7200&resourceVersion="
                                    + rv.get())
                            .build());
                current.set(call);
                if (closed.get()) {
                  return;
                }
                boolean gone = false;
                try (Response r = call.execute();
                    BufferedReader in =
                        new BufferedReader(
                            new InputStreamReader(r.body().byteStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = in.readLine()) != null) {
                    long now = System.nanoTime();
                    JsonObject e = JsonParser.parseString(line).getAsJsonObject();
                    String type = e.get("type").getAsString();
                    JsonObject object = e.getAsJsonObject("object");
                    if (type.equals("ERROR")) {
                      gone = "410".equals(str(object, "code"));
                      break;
                    }
                    String version = str(object, "metadata", "resourceVersion");
                    if (version != null) {
                      rv.set(version);
                    }
                    if (!type.equals("BOOKMARK")) {
                      onEvent.event(type, object, now);
                    }
                  }
                } catch (IOException | RuntimeException e) {
                  // resumed below, unless closed
                }
                if (closed.get()) {
                  return;
                }
                onResume.run();
                if (gone) {
                  try {
                    JsonObject list = getJson(collectionPath);
                    long now = System.nanoTime();
                    rv.set(str(list, "metadata", "resourceVersion"));
                    for (com.google.gson.JsonElement item : list.getAsJsonArray("items")) {
                      onEvent.event("MODIFIED", item.getAsJsonObject(), now);
                    }
                  } catch (IOException | RuntimeException e) {
                    ControllerProcess.sleep(500);
                  }
                }
              }
            },
            "bench-watch-resuming");
    t.setDaemon(true);
    t.start();
    return () -> {
      closed.set(true);
      okhttp3.Call call = current.get();
      if (call != null) {
        call.cancel();
      }
    };
  }

  private String listVersion(String listPath) throws IOException {
    return str(getJson(listPath), "metadata", "resourceVersion");
  }

  interface WatchListener {
    void event(String type, JsonObject object, long receivedNanos);
  }

  static String str(JsonObject o, String... path) {
    com.google.gson.JsonElement e = o;
    for (String k : path) {
      if (e == null || !e.isJsonObject()) {
        return null;
      }
      e = e.getAsJsonObject().get(k);
    }
    return e == null || e.isJsonNull() || !e.isJsonPrimitive() ? null : e.getAsString();
  }
}
