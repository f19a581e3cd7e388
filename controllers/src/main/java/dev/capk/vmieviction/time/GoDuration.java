package dev.capk.vmieviction.time;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Go's duration syntax, which kubectl's {@code --timeout}, controller-runtime's flags and the
 * NodeMaintenance CRD take: "90s", "1m30s", "1.5h", "250ms", "0". Negative durations are refused:
 * none of them can be negative.
 */
public final class GoDuration {
  private static final Pattern PART = Pattern.compile("([0-9]*\\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)");

  private GoDuration() {}

  /** An IllegalArgumentException says what is wrong with {@code text}. */
  public static Duration parse(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("invalid duration \"\": empty");
    }
    String s = text.strip();
    if (s.startsWith("+")) {
      s = s.substring(1);
    }
    if (s.startsWith("-")) {
      throw new IllegalArgumentException("invalid duration \"" + text + "\": must not be negative");
    }
    if (s.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = PART.matcher(s);
    int pos = 0;
    BigDecimal nanos = BigDecimal.ZERO;
    while (pos < s.length()) {
      if (!m.find(pos) || m.start() != pos || m.group(1).isEmpty() || m.group(1).equals(".")) {
        String why =
            s.chars().allMatch(c -> Character.isDigit(c) || c == '.')
                ? "missing unit (e.g. s, m, h)"
                : "not a duration (e.g. 10m, 1h30m, 20s, 500ms)";
        throw new IllegalArgumentException("invalid duration \"" + text + "\": " + why);
      }
      BigDecimal value = new BigDecimal(m.group(1).startsWith(".") ? "0" + m.group(1) : m.group(1));
      nanos = nanos.add(value.multiply(BigDecimal.valueOf(unitNanos(m.group(2)))));
      pos = m.end();
    }
    return Duration.ofNanos(nanos.longValueExact());
  }

  /** {@link #parse}, or ISO-8601's syntax ({@code PT10M}) as the manager's flags also take. */
  public static Duration parseOrIso(String text) {
    String s = text == null ? "" : text.strip();
    if (!s.startsWith("P") && !s.startsWith("p")) {
      return parse(text);
    }
    try {
      return Duration.parse(s);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("invalid duration \"" + text + "\": not an ISO-8601 one");
    }
  }

  private static long unitNanos(String unit) {
    return switch (unit) {
      case "ns" -> 1L;
      case "us", "µs", "μs" -> 1_000L;
      case "ms" -> 1_000_000L;
      case "s" -> 1_000_000_000L;
      case "m" -> 60_000_000_000L;
      case "h" -> 3_600_000_000_000L;
      default -> throw new IllegalArgumentException("unknown unit " + unit);
    };
  }

  /** As Go (and kubectl's messages) print a duration: "20s", "1m30s", "1h0m0s", "250ms". */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    if (d.isNegative()) {
      return "-" + format(d.negated());
    }
    if (d.compareTo(Duration.ofSeconds(1)) < 0) {
      return d.toMillis() + "ms";
    }
    long h = d.toHours();
    long m = d.toMinutesPart();
    double s = d.toSecondsPart() + d.toNanosPart() / 1e9;
    String sec = s == Math.rint(s) ? String.valueOf((long) s) : String.valueOf(s);
    return (h > 0 ? h + "h" + m + "m" : m > 0 ? m + "m" : "") + sec + "s";
  }
}
