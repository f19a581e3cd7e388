package dev.capk.vmieviction.manager;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's HTTP endpoints on the JDK's built-in server: Prometheus text format at /metrics,
 * and /healthz and /readyz probes. Nothing here needs a framework.
 */
public final class HttpEndpoints implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HttpEndpoints.class);

  private final HttpServer server;

  private HttpEndpoints(HttpServer server) {
    this.server = server;
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** /metrics from the registry. */
  public static HttpEndpoints metrics(
      InetSocketAddress bind, java.util.List<CollectorRegistry> registries) throws IOException {
    HttpServer s = HttpServer.create(bind, 16);
    s.createContext(
        "/metrics",
        ex -> {
          if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
            respond(ex, 405, "method not allowed\n", "text/plain");
            return;
          }
          StringWriter w = new StringWriter();
          for (CollectorRegistry registry : registries) {
            TextFormat.write004(w, registry.metricFamilySamples());
          }
          respond(ex, 200, w.toString(), TextFormat.CONTENT_TYPE_004);
        });
    return start(s, "metrics");
  }

  /** /healthz: the process serves requests; /readyz: the informer caches have synced. */
  public static HttpEndpoints probes(InetSocketAddress bind, BooleanSupplier ready)
      throws IOException {
    HttpServer s = HttpServer.create(bind, 16);
    s.createContext("/healthz", ex -> respond(ex, 200, "ok\n", "text/plain"));
    s.createContext(
        "/readyz",
        ex -> {
          if (ready.getAsBoolean()) {
            respond(ex, 200, "ok\n", "text/plain");
          } else {
            respond(ex, 503, "informers not synced\n", "text/plain");
          }
        });
    return start(s, "health probes");
  }

  private static HttpEndpoints start(HttpServer s, String what) {
    s.setExecutor(
        Executors.newSingleThreadExecutor(
            new ThreadFactoryBuilder()
                .setNameFormat("http-" + what.replace(' ', '-'))
                .setDaemon(true)
                .build()));
    s.start();
    log.info("serving {} address={}", what, s.getAddress());
    return new HttpEndpoints(s);
  }

  private static void respond(HttpExchange ex, int code, String body, String contentType)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", contentType);
    boolean head = "HEAD".equals(ex.getRequestMethod());
    ex.sendResponseHeaders(code, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream os = ex.getResponseBody()) {
        os.write(bytes);
      }
    }
    ex.close();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
