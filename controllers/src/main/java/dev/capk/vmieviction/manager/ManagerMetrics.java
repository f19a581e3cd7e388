package dev.capk.vmieviction.manager;

import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.Collections;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/** The manager's gauges, read at scrape time, and the Java client's controller framework's. */
final class ManagerMetrics {

  private ManagerMetrics() {}

  static void register(PrometheusRegistry registry, BooleanSupplier ready, IntSupplier queueDepth) {
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
    registry.register(ManagerMetrics::clientFramework);
  }

  /**
   * The client's {@code DefaultController} counts in simpleclient's default registry (a gauge and a
   * counter, by controller name; nothing else is registered there): served as they are.
   */
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
}
