package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.kube.ScrapeGauge;
import io.prometheus.client.CollectorRegistry;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * The manager's own gauges, read at scrape time: whether /readyz would answer ok (the alert on a
 * controller that is not ready reads it) and how many VMIs wait in the work queue.
 */
final class ManagerMetrics {

  private ManagerMetrics() {}

  static void register(CollectorRegistry registry, BooleanSupplier ready, IntSupplier queueDepth) {
    ScrapeGauge.register(
        registry,
        "vmi_eviction_controller_ready",
        "1 when every informer cache has synced (what /readyz reports), else 0.",
        () -> ready.getAsBoolean() ? 1 : 0);
    ScrapeGauge.register(
        registry,
        "vmi_eviction_workqueue_depth",
        "VMIs waiting in the work queue for a worker (not those waiting out a delay).",
        () -> queueDepth.getAsInt());
  }
}
