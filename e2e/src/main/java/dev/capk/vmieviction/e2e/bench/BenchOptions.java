package dev.capk.vmieviction.e2e.bench;

import java.util.Arrays;
import java.util.List;

/**
 * Knobs, as system properties (make bench passes BENCH_OPTS through): which benchmarks, sizes and
 * run counts. Defaults are what `make bench` measures; smaller values are for developing a
 * benchmark.
 */
final class BenchOptions {
  List<String> only() {
    return strings(
        "bench.only", "drain,startup,evacuation,scale,selector,headofline,migration,cost,external");
  }

  List<Integer> ints(String key, String defaults) {
    return strings(key, defaults).stream().map(Integer::parseInt).toList();
  }

  /** A comma-separated list property; empty entries dropped. */
  List<String> strings(String key, String defaults) {
    return Arrays.stream(System.getProperty(key, defaults).split(","))
        .map(String::strip)
        .filter(s -> !s.isEmpty())
        .toList();
  }

  int integer(String key, int def) {
    return Integer.getInteger(key, def);
  }

  /** Runs for one configuration: its own property, else bench.runs, else {@code def}. */
  int runs(String key, int def) {
    return Integer.getInteger(key, Integer.getInteger("bench.runs", def));
  }
}
