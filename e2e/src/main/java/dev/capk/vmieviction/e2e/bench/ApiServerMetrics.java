package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.IOException;
import java.time.Duration;
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

  /** Requests but WATCHes since {@code before} was read. */
  static double since(LocalCluster cluster, Map<String, Double> before) {
    return nonWatch(cluster) - nonWatch(before);
  }

  /** Requests so far but WATCHes. */
  static double nonWatch(LocalCluster cluster) {
    return nonWatch(byVerb(cluster));
  }

  private static double nonWatch(Map<String, Double> byVerb) {
    return byVerb.entrySet().stream()
        .filter(e -> !e.getKey().equals("WATCH"))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }

  /** When the requests settled: see {@link #awaitQuiet}; nanos by {@link System#nanoTime()}. */
  record Quiet(long startNanos, long quietSinceNanos, double before, double last) {}

  /**
   * Waits until {@code cluster}'s requests (WATCH excluded, read every second) have grown by no
   * more than {@code allowedPerSecond} a second for 3 s, at least 10 s from now (a start-up wave
   * may begin a moment after a cache synced), at most {@code cap}.
   */
  static Quiet awaitQuiet(LocalCluster cluster, double allowedPerSecond, Duration cap) {
    long t0 = System.nanoTime();
    double before = nonWatch(cluster);
    double last = before;
    long quietSince = System.nanoTime();
    while (System.nanoTime() - t0 < cap.toNanos()) {
      ControllerProcess.sleep(1000);
      double now = nonWatch(cluster);
      if (now - last > allowedPerSecond) {
        quietSince = System.nanoTime();
      }
      last = now;
      if (System.nanoTime() - quietSince > 3_000_000_000L
          && System.nanoTime() - t0 > 10_000_000_000L) {
        break;
      }
    }
    return new Quiet(t0, quietSince, before, last);
  }
}
