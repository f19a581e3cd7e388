package dev.capk.vmieviction.e2e.bench;

import static java.util.Objects.requireNonNullElse;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiPredicate;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/** Plain JSON requests to a local cluster's API server with its admin client: fast set-up. */
final class RawKube {
  private final String server;
  private final OkHttpClient http;

  RawKube(KubeCluster cluster) {
    this.server = cluster.serverUrl();
    this.http =
        cluster.client().getHttpClient().newBuilder().readTimeout(60, TimeUnit.SECONDS).build();
  }

  /** The body of a successful request; else throws with the status and the body's start. */
  String call(String method, String path, String type, String body) throws IOException {
    Request.Builder b = new Request.Builder().url(server + path);
    b.method(method, body == null ? null : RequestBody.create(body, MediaType.get(type)));
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
            Report.f(
                "%s %s: HTTP %d %s",
                method, path, r.code(), text.substring(0, Math.min(300, text.length()))));
      }
    }
  }

  String get(String path) throws IOException {
    return call("GET", path, null, null);
  }

  JsonObject getJson(String path) throws IOException {
    return JsonParser.parseString(get(path)).getAsJsonObject();
  }

  List<JsonObject> items(String path) throws IOException {
    List<JsonObject> out = new ArrayList<>();
    getJson(path).getAsJsonArray("items").forEach(e -> out.add(e.getAsJsonObject()));
    return out;
  }

  String post(String path, String json) throws IOException {
    return call("POST", path, "application/json", json);
  }

  String mergePatch(String path, String json) throws IOException {
    return call("PATCH", path, "application/merge-patch+json", json);
  }

  /**
   * Creates namespace {@code ns} (kept if it exists) and waits for its default ServiceAccount,
   * which pods need; {@code withAccount}: creates it (where no kube-controller-manager does).
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
        () -> get("/api/v1/namespaces/" + ns + "/serviceaccounts/default") != null);
  }

  private void postIfAbsent(String path, String json) throws IOException {
    try {
      post(path, json);
    } catch (IOException e) {
      if (!e.getMessage().contains("HTTP 409")) {
        throw e;
      }
    }
  }

  /**
   * Watches a whole collection from now on, on a daemon thread, recording into {@code at}, by name,
   * when (nanoTime) each object was first seen satisfying {@code when} (given each event's type and
   * object); closing the handle stops it. An API server drops a watcher that falls behind a burst:
   * it is resumed from the last resourceVersion seen, or after a 410 by a watch without one, which
   * begins with the collection's items as ADDED; {@code onResume} is told each time, since events
   * after a resume may be seen later than they happened.
   */
  AutoCloseable watchResuming(
      String collection,
      BiPredicate<String, JsonObject> when,
      Map<String, Long> at,
      Runnable onResume)
      throws IOException {
    OkHttpClient streaming = http.newBuilder().readTimeout(0, TimeUnit.MILLISECONDS).build();
    String first = str(getJson(collection + "?limit=1"), "metadata", "resourceVersion");
    AtomicBoolean closed = new AtomicBoolean();
    AtomicReference<Call> current = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              String rv = first; // null after a 410
              while (!closed.get()) {
                String url = server + collection + "?watch=1&allowWatchBookmarks=true";
                url += "&timeoutSeconds=7200" + (rv == null ? "" : "&resourceVersion=" + rv);
                Call call = streaming.newCall(new Request.Builder().url(url).build());
                current.set(call);
                if (closed.get()) {
                  return;
                }
                try (Response r = call.execute();
                    BufferedReader in = new BufferedReader(r.body().charStream())) {
                  for (String line; !closed.get() && (line = in.readLine()) != null; ) {
                    long now = System.nanoTime();
                    JsonObject e = JsonParser.parseString(line).getAsJsonObject();
                    String type = e.get("type").getAsString();
                    JsonObject object = e.getAsJsonObject("object");
                    if (type.equals("ERROR")) {
                      rv = "410".equals(str(object, "code")) ? null : rv;
                      break;
                    }
                    rv = requireNonNullElse(str(object, "metadata", "resourceVersion"), rv);
                    if (!type.equals("BOOKMARK") && when.test(type, object)) {
                      at.putIfAbsent(str(object, "metadata", "name"), now);
                    }
                  }
                } catch (IOException | RuntimeException e) {
                  // resumed below, unless closed
                }
                if (!closed.get()) {
                  onResume.run();
                }
              }
            },
            "bench-watch-resuming");
    t.setDaemon(true);
    t.start();
    return () -> {
      closed.set(true);
      Call call = current.get();
      if (call != null) {
        call.cancel();
      }
    };
  }

  /** Whether a watch event says its object is gone or going. */
  static boolean deleted(String type, JsonObject o) {
    return type.equals("DELETED") || str(o, "metadata", "deletionTimestamp") != null;
  }

  static String str(JsonElement o, String... path) {
    JsonElement e = o;
    for (String k : path) {
      if (e == null || !e.isJsonObject()) {
        return null;
      }
      e = e.getAsJsonObject().get(k);
    }
    return e == null || !e.isJsonPrimitive() ? null : e.getAsString();
  }

  static String str(String json, String... path) {
    return str(JsonParser.parseString(json), path);
  }
}
