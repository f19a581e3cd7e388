package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.kube.Samples;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ManagerMetricsTest {

  @Test
  void readinessAndQueueDepthAreReadAtScrapeTime() throws Exception {
    PrometheusRegistry registry = new PrometheusRegistry();
    AtomicBoolean ready = new AtomicBoolean(false);
    AtomicInteger depth = new AtomicInteger(0);
    assertNull(HttpEndpoints.metrics("0", registry, ready::get, depth::get), "not served");

    assertEquals(0.0, Samples.value(registry, "vmi_eviction_controller_ready"));
    assertEquals(0.0, Samples.value(registry, "vmi_eviction_workqueue_depth"));
    ready.set(true);
    depth.set(7);
    assertEquals(1.0, Samples.value(registry, "vmi_eviction_controller_ready"));
    assertEquals(7.0, Samples.value(registry, "vmi_eviction_workqueue_depth"));
  }

  /**
   * Prometheus text unless the scraper asks for OpenMetrics; the Java client's controller framework
   * counts (in simpleclient's default registry) are served with ours, under their own names.
   */
  @Test
  void metricsAreServedAsPrometheusTextOrOpenMetricsOnRequestWithTheClientFrameworks()
      throws Exception {
    io.prometheus.client.Counter framework =
        io.prometheus.client.Counter.build("capk_test_framework_reconciles_total", "test")
            .labelNames("name")
            .register();
    framework.labels("vmi").inc();
    PrometheusRegistry registry = new PrometheusRegistry();
    try (HttpEndpoints endpoints =
        HttpEndpoints.metrics("127.0.0.1:0", registry, () -> true, () -> 2)) {
      URI uri = URI.create("http://127.0.0.1:" + endpoints.address().getPort() + "/metrics");
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> text =
          http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> openMetrics =
          http.send(
              HttpRequest.newBuilder(uri)
                  .header(
                      "Accept",
                      "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;q=0.4,*/*;q=0.1")
                  .build(),
              HttpResponse.BodyHandlers.ofString());

      assertEquals(
          "text/plain; version=0.0.4; charset=utf-8",
          text.headers().firstValue("Content-Type").orElseThrow());
      assertTrue(text.body().contains("\nvmi_eviction_workqueue_depth 2.0\n"), text.body());
      assertTrue(
          text.body().contains("\ncapk_test_framework_reconciles_total{name=\"vmi\"} 1.0\n"),
          text.body());
      assertFalse(text.body().contains("# EOF"), text.body());
      assertTrue(
          openMetrics
              .headers()
              .firstValue("Content-Type")
              .orElseThrow()
              .startsWith("application/openmetrics-text; version=1.0.0"));
      assertTrue(openMetrics.body().contains("\nvmi_eviction_controller_ready 1.0\n"));
      assertTrue(
          openMetrics.body().contains("\ncapk_test_framework_reconciles_total{name=\"vmi\"} 1.0\n"),
          openMetrics.body());
      assertTrue(openMetrics.body().endsWith("# EOF\n"), openMetrics.body());
    } finally {
      io.prometheus.client.CollectorRegistry.defaultRegistry.unregister(framework);
    }
  }
}
