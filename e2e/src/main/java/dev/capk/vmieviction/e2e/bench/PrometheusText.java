package dev.capk.vmieviction.e2e.bench;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads histograms and gauges from a /metrics page in Prometheus' text format, summed over their
 * label sets: what a benchmark needs from the controller's own metrics, without a Prometheus.
 */
final class PrometheusText {
  private final String text;

  PrometheusText(String text) {
    this.text = text;
  }

  /** A histogram's cumulative bucket counts by upper bound ({@code le}; +Inf last). */
  record Histogram(TreeMap<Double, Double> cumulative) {
    double count() {
      return cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
    }

    /**
     * The smallest bucket bound holding at least {@code p}% of the observations: an upper bound of
     * that percentile (+Inf when it lies beyond the last finite bucket).
     */
    double percentileUpperBound(double p) {
      double need = count() * p / 100.0;
      for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
        if (e.getValue() >= need) {
          return e.getKey();
        }
      }
      return Double.POSITIVE_INFINITY;
    }
  }

  /** {@code name}'s buckets ({@code name_bucket{...,le="..."}}), summed over the other labels. */
  Optional<Histogram> histogram(String name) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(name) + "_bucket\\{([^}]*)} ([0-9.eE+\\-]+|NaN)")
            .matcher(text);
    Pattern le = Pattern.compile("le=\"([^\"]+)\"");
    TreeMap<Double, Double> buckets = new TreeMap<>();
    while (m.find()) {
      Matcher bound = le.matcher(m.group(1));
      if (bound.find()) {
        double upper =
            bound.group(1).equals("+Inf")
                ? Double.POSITIVE_INFINITY
                : Double.parseDouble(bound.group(1));
        buckets.merge(upper, Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return buckets.isEmpty() ? Optional.empty() : Optional.of(new Histogram(buckets));
  }

  /** A gauge's value, the largest over its label sets (the gauges read here are maxima). */
  Optional<Double> gaugeMax(String name) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*})? ([0-9.eE+\\-]+)$")
            .matcher(text);
    Double max = null;
    while (m.find()) {
      double v = Double.parseDouble(m.group(1));
      max = max == null ? v : Math.max(max, v);
    }
    return Optional.ofNullable(max);
  }
}
