package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.kube.Samples;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Several reconcilers (external infra: one per infra namespace) share one set of gauges. */
class EvictionMetricsSourcesTest {

  @Test
  void inProgressSumsTheSourcesAndDeadlineUsedIsTheirLargestUntilOneIsForgotten() {
    PrometheusRegistry registry = new PrometheusRegistry();
    EvictionMetrics metrics = new EvictionMetrics(registry);
    Object infra1 = new Object();
    Object infra2 = new Object();
    metrics.track(infra1, new EvictionMetrics.Source(() -> 3, () -> 0.25, List::of));
    metrics.track(infra2, new EvictionMetrics.Source(() -> 2, () -> 0.75, List::of));
    assertEquals(5.0, Samples.value(registry, "vmi_eviction_evacuations_in_progress"));
    assertEquals(0.75, Samples.value(registry, "vmi_eviction_evacuation_deadline_used_ratio"));

    metrics.forget(infra2);
    assertEquals(3.0, Samples.value(registry, "vmi_eviction_evacuations_in_progress"));
    assertEquals(0.25, Samples.value(registry, "vmi_eviction_evacuation_deadline_used_ratio"));
  }
}
