package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The API server's own request counter, {@code apiserver_request_total}, read from its /metrics:
 * totals by verb (WATCH excluded by the callers that want it so). It counts every client: it has no
 * client label.
 */
final class ApiServerMetrics {
  private static final Pattern LINE =
      Pattern.compile("(?m)^apiserver_request_total\\{([^}]*)} ([0-9.eE+]+)$");
  private static final Pattern VERB = Pattern.compile("verb=\"([A-Z]+)\"");

  private ApiServerMetrics() {}

  /** Requests so far by verb (GET, LIST, POST, PATCH, PUT, DELETE, WATCH, ...). */
  static Map<String, Double> byVerb(LocalCluster cluster) {
    String text;
    try {
      text = new RawKube(cluster).get("/metrics");
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot read /metrics of " + cluster.name() + ": " + e.getMessage(), e);
    }
    Map<String, Double> out = new TreeMap<>();
    Matcher m = LINE.matcher(text);
    while (m.find()) {
      Matcher v = VERB.matcher(m.group(1));
      if (v.find()) {
        out.merge(v.group(1), Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return out;
  }

  static Map<String, Double> minus(Map<String, Double> after, Map<String, Double> before) {
    Map<String, Double> d = new TreeMap<>();
    after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0.0)));
    return d;
  }

  static double nonWatch(Map<String, Double> byVerb) {
    return byVerb.entrySet().stream()
        .filter(e -> !e.getKey().equals("WATCH"))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }
}
