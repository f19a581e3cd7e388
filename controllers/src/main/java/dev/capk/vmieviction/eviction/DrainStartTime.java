package dev.capk.vmieviction.eviction;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * The drain start annotation's value: RFC 3339 in UTC, second precision (what Kubernetes writes for
 * its own timestamps). Pure.
 */
public final class DrainStartTime {
  private DrainStartTime() {}

  /** What an annotation value says. */
  public sealed interface Parsed permits Absent, Valid, Malformed {}

  /** No annotation: the drain starts now. */
  public record Absent() implements Parsed {}

  /** A usable start time. */
  public record Valid(Instant start) implements Parsed {}

  /**
   * Present but unusable: replaced by now (with a Warning). The raw value is kept for the message.
   */
  public record Malformed(String raw) implements Parsed {}

  public static String format(Instant instant) {
    return DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.SECONDS));
  }

  /**
   * Parses an RFC 3339 timestamp with any offset (normalised to UTC). A time in the future (beyond
   * the tolerated clock skew) is malformed: honouring it would push the deadline out arbitrarily.
   */
  public static Parsed parse(String raw, Instant now, java.time.Duration maxClockSkew) {
    if (raw == null) {
      return new Absent();
    }
    Optional<Instant> instant = parseRfc3339(raw);
    if (instant.isEmpty()) {
      return new Malformed(raw);
    }
    if (instant.get().isAfter(now.plus(maxClockSkew))) {
      return new Malformed(raw);
    }
    return new Valid(instant.get());
  }

  /**
   * RFC 3339 (an ISO 8601 profile): {@code 2024-05-01T10:00:00Z}, fractions and offsets allowed.
   */
  public static Optional<Instant> parseRfc3339(String raw) {
    if (raw == null) {
      return Optional.empty();
    }
    String s = raw.trim();
    if (s.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant());
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  static String describe(Instant instant) {
    return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC).toString();
  }
}
