package dev.capk.vmieviction.training;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Moves the times in a recorded answer by the time between the recording and its replay: the
 * controller reads a drain's start and deadline from them, and an evacuation replayed days later
 * must not find its deadline passed (it would take the deadline's path, not the evacuation's). A
 * replay runs faster than its recording, so the shift puts the recording's latest time at the
 * replay's start ({@link #latest}): a drain start the controller reads back is then never later
 * than the one it wrote (which it would take for a start moved later, and restore).
 */
final class Timestamps {
  /** A JSON string holding an RFC 3339 time in UTC, as the API server writes them. */
  private static final Pattern TIME =
      Pattern.compile("\"(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2})(\\.\\d{1,9})?Z\"");

  private Timestamps() {}

  /** The latest time in {@code texts}, or null if none holds one. */
  static Instant latest(Iterable<String> texts) {
    Instant latest = null;
    for (String text : texts) {
      Matcher m = TIME.matcher(text);
      while (m.find()) {
        Instant t = parse(m);
        latest = latest == null || t.isAfter(latest) ? t : latest;
      }
    }
    return latest;
  }

  private static Instant parse(Matcher m) {
    Instant t = LocalDateTime.parse(m.group(1)).toInstant(ZoneOffset.UTC);
    return m.group(2) == null
        ? t
        : t.plusNanos(Long.parseLong((m.group(2).substring(1) + "000000000").substring(0, 9)));
  }

  static String shift(String json, Duration by) {
    if (by.isZero()) {
      return json;
    }
    Matcher m = TIME.matcher(json);
    StringBuilder out = new StringBuilder(json.length());
    while (m.find()) {
      Instant t = parse(m).plus(by);
      m.appendReplacement(out, Matcher.quoteReplacement("\"" + format(t, m.group(2)) + "\""));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** {@code t} as the API server wrote it: whole seconds, or as many fraction digits as before. */
  private static String format(Instant t, String fraction) {
    String seconds =
        DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss").format(t.atOffset(ZoneOffset.UTC));
    if (fraction == null) {
      return seconds + "Z";
    }
    String nanos = String.format("%09d", t.getNano());
    return seconds + "." + nanos.substring(0, fraction.length() - 1) + "Z";
  }
}
