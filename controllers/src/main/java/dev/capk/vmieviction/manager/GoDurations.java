package dev.capk.vmieviction.manager;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations written as Go (and so controller-runtime flags) writes them: {@code 1h30m}, {@code 20s}, {@code 500ms}. */
public final class GoDurations {
  private GoDurations() {}

  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|h|m|s)");

  public static Duration parse(String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("empty duration");
    }
    String v = value.trim();
    if (v.startsWith("P") || v.startsWith("p")) {
      try {
        return Duration.parse(v);
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException("invalid duration \"" + value + "\"");
      }
    }
    if (v.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = PART.matcher(v);
    int pos = 0;
    double nanos = 0;
    while (pos < v.length()) {
      if (!m.find(pos) || m.start() != pos) {
        throw new IllegalArgumentException(
            "invalid duration \"" + value + "\" (expected e.g. 10m, 1h30m, 20s, 500ms)");
      }
      double n = Double.parseDouble(m.group(1));
      nanos += n * switch (m.group(2)) {
        case "h" -> 3_600e9;
        case "m" -> 60e9;
        case "s" -> 1e9;
        default -> 1e6;
      };
      pos = m.end();
    }
    return Duration.ofNanos(Math.round(nanos));
  }

  /** The shortest Go-style form: {@code 10m}, {@code 1h30m}, {@code 1.5s}. */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    StringBuilder sb = new StringBuilder();
    if (d.isNegative()) {
      sb.append('-');
      d = d.negated();
    }
    long h = d.toHours();
    long m = d.toMinutesPart();
    long s = d.toSecondsPart();
    long ms = d.toMillisPart();
    if (h > 0) sb.append(h).append('h');
    if (m > 0) sb.append(m).append('m');
    if (s > 0 || ms > 0) {
      if (ms > 0 && h == 0 && m == 0 && s == 0) {
        sb.append(ms).append("ms");
      } else if (ms > 0) {
        sb.append(s).append('.').append(String.format("%03d", ms).replaceAll("0+$", "")).append('s');
      } else {
        sb.append(s).append('s');
      }
    }
    return sb.toString();
  }
}
