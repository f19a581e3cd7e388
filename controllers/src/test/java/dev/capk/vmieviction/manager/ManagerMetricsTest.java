package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.prometheus.client.CollectorRegistry;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ManagerMetricsTest {

  @Test
  void readinessAndQueueDepthAreReadAtScrapeTime() {
    CollectorRegistry registry = new CollectorRegistry();
    AtomicBoolean ready = new AtomicBoolean(false);
    AtomicInteger depth = new AtomicInteger(0);
    ManagerMetrics.register(registry, ready::get, depth::get);

    assertEquals(0.0, registry.getSampleValue("vmi_eviction_controller_ready"));
    assertEquals(0.0, registry.getSampleValue("vmi_eviction_workqueue_depth"));
    ready.set(true);
    depth.set(7);
    assertEquals(1.0, registry.getSampleValue("vmi_eviction_controller_ready"));
    assertEquals(7.0, registry.getSampleValue("vmi_eviction_workqueue_depth"));
  }
}
