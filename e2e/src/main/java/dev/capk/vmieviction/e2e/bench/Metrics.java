package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BinaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A /metrics page in Prometheus' text format, summed over label sets: an API server's {@code
 * apiserver_request_total} (every client's requests: it has no client label) and the controller's
 * own histograms and gauges, without a Prometheus.
 */
record Metrics(String text) {
  /** The values of {@code name}'s series by the value of {@code label}, merged by {@code merge}. */
  private TreeMap<String, Double> by(String name, String label, BinaryOperator<Double> merge) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{([^}]*)})? ([0-9.eE+\\-]+|NaN)")
            .matcher(text);
    Pattern value = Pattern.compile(label + "=\"([^\"]+)\"");
    TreeMap<String, Double> out = new TreeMap<>();
    while (m.find()) {
      Matcher v = value.matcher(m.group(1) == null ? "" : m.group(1));
      out.merge(v.find() ? v.group(1) : "", Double.parseDouble(m.group(2)), merge);
    }
    return out;
  }

  /** An API server's requests so far but WATCHes. */
  static double nonWatch(LocalCluster cluster) {
    try {
      return new Metrics(new RawKube(cluster).get("/metrics"))
          .by("apiserver_request_total", "verb", Double::sum).entrySet().stream()
              .filter(e -> !e.getKey().equals("WATCH"))
              .mapToDouble(Map.Entry::getValue)
              .sum();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read /metrics of " + cluster.name(), e);
    }
  }

  /** A histogram's cumulative bucket counts by upper bound ({@code le}; +Inf last). */
  record Histogram(TreeMap<Double, Double> cumulative) {
    double count() {
      return cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
    }

    /** The smallest bucket bound holding at least {@code p}% of the observations, as text. */
    String percentileBound(double p) {
      for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
        if (e.getValue() >= count() * p / 100.0) {
          return Double.isInfinite(e.getKey()) ? "+Inf" : Report.f("%s", e.getKey());
        }
      }
      return "+Inf";
    }
  }

  Optional<Histogram> histogram(String name) {
    TreeMap<Double, Double> buckets = new TreeMap<>();
    by(name + "_bucket", "le", Double::sum)
        .forEach(
            (le, v) ->
                buckets.put(
                    le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), v));
    return buckets.isEmpty() ? Optional.empty() : Optional.of(new Histogram(buckets));
  }

  /** A gauge's value, the largest over its label sets (the gauges read here are maxima). */
  Optional<Double> gaugeMax(String name) {
    return by(name, "", Math::max).values().stream().max(Double::compare);
  }
}
