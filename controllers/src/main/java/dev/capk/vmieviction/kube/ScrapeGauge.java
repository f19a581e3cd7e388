package dev.capk.vmieviction.kube;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Gauge;
import java.util.function.DoubleSupplier;

/** A gauge read when scraped: the value of now, not of the last update. */
public final class ScrapeGauge {
  private ScrapeGauge() {}

  public static void register(
      CollectorRegistry registry, String name, String help, DoubleSupplier value) {
    Gauge.build(name, help)
        .create()
        .setChild(
            new Gauge.Child() {
              @Override
              public double get() {
                return value.getAsDouble();
              }
            })
        .register(registry);
  }
}
