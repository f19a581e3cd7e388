package dev.capk.vmieviction.manager;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * /metrics (Prometheus text, OpenMetrics when accepted), with the manager's own gauges, and the
 * /healthz and /readyz probes on the JDK's server, each at a controller-runtime style address
 * ({@code :8080}, {@code 0}: disabled).
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

  /**
   * Registers the manager's gauges, read at scrape time, and the client framework's metrics; serves
   * them with the rest of {@code registry}. Null when {@code bind} is disabled.
   */
  public static HttpEndpoints metrics(
      String bind, PrometheusRegistry registry, BooleanSupplier ready, IntSupplier queueDepth)
      throws IOException {
    GaugeWithCallback.builder()
        .name("vmi_eviction_controller_ready")
        .help("1 when every informer cache has synced (what /readyz reports), else 0.")
        .callback(c -> c.call(ready.getAsBoolean() ? 1 : 0))
        .register(registry);
    GaugeWithCallback.builder()
        .name("vmi_eviction_workqueue_depth")
        .help("VMIs waiting in the work queue for a worker (not those waiting out a delay).")
        .callback(c -> c.call(queueDepth.getAsInt()))
        .register(registry);
    registry.register(HttpEndpoints::clientFramework);
    HttpHandler metrics =
        ex -> {
          if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
            respond(ex, 405, "method not allowed\n", "text/plain");
            return;
          }
          ExpositionFormatWriter format = OpenMetricsTextFormatWriter.create();
          if (!format.accepts(ex.getRequestHeaders().getFirst("Accept"))) {
            format = PrometheusTextFormatWriter.create();
          }
          ByteArrayOutputStream body = new ByteArrayOutputStream();
          format.write(body, registry.scrape());
          respond(ex, 200, body.toString(StandardCharsets.UTF_8), format.getContentType());
        };
    return serve(bind, "metrics", Map.of("/metrics", metrics));
  }

  /** The client's {@code DefaultController} counts in simpleclient's default registry. */
  static MetricSnapshots clientFramework() {
    MetricSnapshots.Builder all = MetricSnapshots.builder();
    for (var f : Collections.list(CollectorRegistry.defaultRegistry.metricFamilySamples())) {
      boolean gauge = f.type == Collector.Type.GAUGE;
      var gauges = GaugeSnapshot.builder().name(f.name).help(f.help);
      var counters = CounterSnapshot.builder().name(f.name).help(f.help);
      for (var s : f.samples) {
        Labels labels = Labels.of(s.labelNames, s.labelValues);
        if (gauge) {
          gauges.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(s.value).build());
        } else if (s.name.equals(f.name + "_total")) { // not a counter's _created
          counters.dataPoint(
              CounterDataPointSnapshot.builder().labels(labels).value(s.value).build());
        }
      }
      all.metricSnapshot(gauge ? gauges.build() : counters.build());
    }
    return all.build();
  }

  /** /healthz: the process serves; /readyz: the caches synced. Null when disabled. */
  public static HttpEndpoints probes(String bind, BooleanSupplier ready) throws IOException {
    return serve(
        bind,
        "health probes",
        Map.of(
            "/healthz",
            ex -> respond(ex, 200, "ok\n", "text/plain"),
            "/readyz",
            ex -> {
              boolean ok = ready.getAsBoolean();
              respond(ex, ok ? 200 : 503, ok ? "ok\n" : "informers not synced\n", "text/plain");
            }));
  }

  private static HttpEndpoints serve(String bind, String what, Map<String, HttpHandler> handlers)
      throws IOException {
    if (disabled(bind)) {
      return null;
    }
    HttpServer s = HttpServer.create(parse(bind), 16);
    handlers.forEach(s::createContext);
    String thread = "http-" + what.replace(' ', '-');
    s.setExecutor(
        Executors.newSingleThreadExecutor(Thread.ofPlatform().name(thread).daemon().factory()));
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

  static boolean disabled(String address) {
    return address == null || address.isBlank() || address.equals("0");
  }

  /** {@code [HOST]:PORT}; port 0 asks for any free one. */
  static InetSocketAddress parse(String address) {
    try {
      int colon = address.lastIndexOf(':');
      String host = address.substring(0, colon).replaceAll("^\\[(.*)]$", "$1");
      int port = Integer.parseInt(address.substring(colon + 1));
      return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
    } catch (RuntimeException e) { // no colon, no number, a port out of range
      throw new IllegalArgumentException(
          "bind address \""
              + address
              + "\" is not [HOST]:PORT with a port up to 65535 (e.g. :8080)");
    }
  }

  static Optional<String> problem(String flag, String address) {
    try {
      if (!disabled(address)) {
        parse(address);
      }
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.of(flag + ": " + e.getMessage());
    }
  }
}
