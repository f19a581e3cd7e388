package dev.capk.vmieviction.e2e.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Order statistics of a sample: median (min/max) for timings of a few runs, percentiles for many
 * samples.
 */
public record Stats(List<Double> sorted) {
  public static Stats of(Collection<Double> values) {
    List<Double> s = new ArrayList<>(values);
    s.sort(Double::compare);
    return new Stats(List.copyOf(s));
  }

  /** {@code f} of each of {@code items}. */
  public static <T> Stats over(Collection<T> items, java.util.function.ToDoubleFunction<T> f) {
    return of(items.stream().map(x -> f.applyAsDouble(x)).toList());
  }

  public int n() {
    return sorted.size();
  }

  public boolean isEmpty() {
    return sorted.isEmpty();
  }

  public double median() {
    int n = sorted.size();
    if (n == 0) {
      return Double.NaN;
    }
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  public double min() {
    return sorted.isEmpty() ? Double.NaN : sorted.get(0);
  }

  public double max() {
    return sorted.isEmpty() ? Double.NaN : sorted.get(sorted.size() - 1);
  }

  /** Nearest-rank percentile (p in 0..100): with 100 samples p99 is the 99th smallest. */
  public double percentile(double p) {
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.min(sorted.size(), Math.max(1, rank)) - 1);
  }

  /** "median", "min", "max" or "pNN" (nearest rank). */
  public double get(String which) {
    return switch (which) {
      case "median" -> median();
      case "min" -> min();
      case "max" -> max();
      default -> percentile(Double.parseDouble(which.substring(1)));
    };
  }

  /** Each of {@code which} (see {@link #get}) in {@code format}: table cells. */
  public List<String> cells(String format, String... which) {
    return java.util.Arrays.stream(which)
        .map(w -> String.format(Locale.ROOT, format, get(w)))
        .toList();
  }

  /** As {@link #cells}, joined by " / ". */
  public String joined(String format, String... which) {
    return String.join(" / ", cells(format, which));
  }

  /** "12.3 (11.9–14.0)": median (min–max), with {@code decimals} decimals. */
  public String medianMinMax(int decimals) {
    if (sorted.isEmpty()) {
      return "n/a";
    }
    String f = "%." + decimals + "f";
    return String.format(Locale.ROOT, f + " (" + f + "–" + f + ")", median(), min(), max());
  }
}
