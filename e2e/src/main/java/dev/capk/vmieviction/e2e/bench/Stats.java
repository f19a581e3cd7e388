package dev.capk.vmieviction.e2e.bench;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.function.ToDoubleFunction;

/** Order statistics: median (min–max) of a few runs' timings, percentiles of many samples. */
record Stats(List<Double> sorted) {
  static Stats of(Collection<Double> values) {
    return new Stats(values.stream().sorted().toList());
  }

  static <T> Stats over(Collection<T> items, ToDoubleFunction<T> f) {
    return of(items.stream().map(x -> f.applyAsDouble(x)).toList());
  }

  int n() {
    return sorted.size();
  }

  boolean isEmpty() {
    return sorted.isEmpty();
  }

  double median() {
    int n = n();
    return n == 0
        ? Double.NaN
        : n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  double min() {
    return isEmpty() ? Double.NaN : sorted.get(0);
  }

  double max() {
    return isEmpty() ? Double.NaN : sorted.get(n() - 1);
  }

  /** Nearest-rank percentile (p in 0..100): with 100 samples p99 is the 99th smallest. */
  double percentile(double p) {
    int rank = (int) Math.ceil(p / 100.0 * n());
    return isEmpty() ? Double.NaN : sorted.get(Math.min(n(), Math.max(1, rank)) - 1);
  }

  /** "median", "min", "max" or "pNN" (nearest rank). */
  double get(String which) {
    return switch (which) {
      case "median" -> median();
      case "min" -> min();
      case "max" -> max();
      default -> percentile(Double.parseDouble(which.substring(1)));
    };
  }

  /** Each of {@code which} (see {@link #get}) in {@code format}: table cells. */
  List<String> cells(String format, String... which) {
    return Arrays.stream(which).map(w -> Report.f(format, get(w))).toList();
  }

  String joined(String format, String... which) {
    return String.join(" / ", cells(format, which));
  }

  /** "12.3 (11.9–14.0)": median (min–max), with {@code decimals} decimals. */
  String medianMinMax(int decimals) {
    String f = "%." + decimals + "f";
    return isEmpty() ? "n/a" : Report.f(f + " (" + f + "–" + f + ")", median(), min(), max());
  }
}
