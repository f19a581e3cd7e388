package dev.capk.vmieviction.e2e.harness;

import dev.capk.vmieviction.training.LoopbackServer;
import dev.capk.vmieviction.training.Recording;
import dev.capk.vmieviction.training.SecretData;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.RequestBody;
import okio.BufferedSource;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Records an evacuation for the controller's ahead-of-time cache (the training module replays it):
 * an HTTPS, HTTP/2 proxy on loopback between the controller and the real API servers. The
 * controller's kubeconfigs name the target by bearer token ({@link #kubeconfig}); the proxy asks
 * that target's API server with that target's real credentials, and writes each request and answer
 * (watches line by line, Secrets' data blanked) to a {@link Recording}.
 */
public final class RecordingProxy implements AutoCloseable {
  private final Map<String, Upstream> upstreams = new ConcurrentHashMap<>();
  private final Recording.Writer out;
  private final LoopbackServer server;
  private final AtomicLong ids = new AtomicLong();

  /** Per target: the last request received and how often each key came; guarded by itself. */
  private final Map<String, Map<String, Integer>> counts = new HashMap<>();

  private final Map<String, String> lastKey = new HashMap<>();

  private record Upstream(String base, OkHttpClient http) {}

  public RecordingProxy(Path file, List<String> controllerFlags) throws Exception {
    out = new Recording.Writer(file, new Recording.Header(Instant.now(), controllerFlags));
    server = new LoopbackServer(new Forward());
  }

  /** Sends {@code target}'s requests to the API server of {@code upstreamKubeconfig}. */
  public void route(String target, String upstreamKubeconfig) throws IOException {
    var client =
        ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(new StringReader(upstreamKubeconfig)))
            .build();
    OkHttpClient http = client.getHttpClient().newBuilder().readTimeout(Duration.ZERO).build();
    upstreams.put(target, new Upstream(client.getBasePath(), http));
  }

  /** The kubeconfig through which a client's requests are recorded as {@code target}'s. */
  public String kubeconfig(String target) {
    return server.kubeconfig(target);
  }

  @Override
  public void close() throws Exception {
    server.close();
    out.close();
  }

  /** Counts a request of {@code target}: the trigger of the watch lines that follow it. */
  private void received(String target, String key) {
    synchronized (counts) {
      counts.computeIfAbsent(target, t -> new HashMap<>()).merge(key, 1, Integer::sum);
      lastKey.put(target, key);
    }
  }

  private Recording.Line line(String target, long watch, long started, String text, boolean end) {
    synchronized (counts) {
      String after = lastKey.get(target);
      int n = after == null ? 0 : counts.get(target).get(after);
      long at = Duration.ofNanos(System.nanoTime() - started).toMillis();
      return new Recording.Line(watch, at, after, n, text, end);
    }
  }

  private final class Forward extends Handler.Abstract {
    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      String target = LoopbackServer.token(request.getHeaders().get(HttpHeader.AUTHORIZATION));
      Upstream up = upstreams.get(target);
      if (up == null) {
        Content.Source.consumeAll(request);
        response.setStatus(401);
        Content.Sink.write(response, true, "no route for this token", callback);
        return true;
      }
      String path = request.getHttpURI().getPath();
      String query = request.getHttpURI().getQuery();
      String key = Recording.key(request.getMethod(), path, query);
      java.nio.ByteBuffer content = Content.Source.asByteBuffer(request);
      byte[] body = new byte[content.remaining()];
      content.get(body);
      received(target, key);
      String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
      okhttp3.Request.Builder forward =
          new okhttp3.Request.Builder().url(up.base() + path + (query == null ? "" : "?" + query));
      String accept = request.getHeaders().get(HttpHeader.ACCEPT);
      if (accept != null) {
        forward.header("Accept", accept);
      }
      boolean hasBody = body.length > 0 || !List.of("GET", "DELETE").contains(request.getMethod());
      forward.method(
          request.getMethod(),
          hasBody
              ? RequestBody.create(body, contentType == null ? null : MediaType.parse(contentType))
              : null);
      boolean watch = query != null && query.matches("(^|.*&)watch=(true|1)(&.*|$)");
      Call call = up.http().newCall(forward.build());
      try (okhttp3.Response answer = call.execute()) {
        String type = answer.header("Content-Type", "application/json");
        response.setStatus(answer.code());
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        long id = ids.incrementAndGet();
        if (watch && answer.code() == 200) {
          out.exchange(new Recording.Exchange(id, target, key, answer.code(), type, "", true));
          stream(target, id, answer.body().source(), response, callback, call);
        } else {
          String text = answer.body().string();
          String scrubbed = SecretData.scrub(text);
          out.exchange(
              new Recording.Exchange(id, target, key, answer.code(), type, scrubbed, false));
          Content.Sink.write(response, true, text, callback);
        }
      }
      return true;
    }

    private void stream(
        String target,
        long id,
        BufferedSource from,
        Response response,
        Callback callback,
        Call call)
        throws IOException {
      long started = System.nanoTime();
      OutputStream to = Content.Sink.asOutputStream(response);
      to.flush();
      try {
        for (String text; (text = from.readUtf8Line()) != null; ) {
          out.line(line(target, id, started, SecretData.scrub(text), false));
          to.write((text + "\n").getBytes(StandardCharsets.UTF_8));
          to.flush();
        }
      } catch (IOException clientOrServerGone) {
        // The controller ended the watch (or the server broke it): nothing more to record.
        call.cancel();
        callback.failed(clientOrServerGone);
        return;
      }
      out.line(line(target, id, started, "", true));
      to.close();
      callback.succeeded();
    }
  }
}
