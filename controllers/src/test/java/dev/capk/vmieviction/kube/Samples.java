package dev.capk.vmieviction.kube;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * One sample's value as a scraper reads it: from the Prometheus text of a registry, so the names
 * the alerts and the dashboard read (with {@code _total}, {@code _count}, {@code _bucket}) are what
 * is checked.
 */
public final class Samples {
  private Samples() {}

  /** The value of {@code name} with no labels; null when absent. */
  public static Double value(PrometheusRegistry registry, String name) {
    return value(registry, name, new String[0], new String[0]);
  }

  /** The value of {@code name} with exactly these labels (in name order); null when absent. */
  public static Double value(
      PrometheusRegistry registry, String name, String[] labelNames, String[] labelValues) {
    StringBuilder series = new StringBuilder(name);
    for (int i = 0; i < labelNames.length; i++) {
      series.append(i == 0 ? "{" : ",").append(labelNames[i]).append("=\"");
      series.append(labelValues[i]).append(i == labelNames.length - 1 ? "\"}" : "\"");
    }
    String prefix = series.append(' ').toString();
    return PrometheusTextFormatWriter.create()
        .toDebugString(registry.scrape())
        .lines()
        .filter(l -> l.startsWith(prefix))
        .map(l -> Double.valueOf(l.substring(prefix.length()).trim()))
        .findFirst()
        .orElse(null);
  }
}
