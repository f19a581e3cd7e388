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
 * its own timestamps), and what to do with it ({@link #decide}). Pure.
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

  /**
   * What to do with the drain start annotation of a VMI being evacuated, given what it says now and
   * the earliest start this controller has seen or written for the VMI's UID. The deadline only
   * ever moves earlier: a start that was removed, moved later or made malformed in the middle of a
   * drain is restored, never followed.
   */
  public sealed interface Decision {

    /** The start the deadline counts from. */
    Instant start();

    /** The annotation holds a usable start, no later than any we knew: keep it. */
    record Keep(Instant start) implements Decision {}

    /**
     * No start known and none recorded: a new evacuation, starting when this process first saw the
     * mark (now, if it did not see it); write it.
     */
    record Begin(Instant start) implements Decision {}

    /**
     * No start known and the annotation is unusable: replace it by the mark's first sighting (or
     * now), with a warning.
     */
    record ReplaceMalformed(Instant start, String raw) implements Decision {}

    /**
     * Mid-drain, the annotation no longer holds the earliest start: write that back, with a
     * warning.
     */
    record Restore(Instant start, Tampering tampering, String raw) implements Decision {}

    /** How the annotation was changed after we knew an earlier start. */
    enum Tampering {
      REMOVED("was removed"),
      MOVED_LATER("was moved later"),
      MALFORMED("was made unusable");

      public final String phrase;

      Tampering(String phrase) {
        this.phrase = phrase;
      }
    }
  }

  /**
   * @param annotation what the annotation says now (parsed against the same {@code now})
   * @param earliestKnown the earliest start seen or written for this VMI's UID by this process
   * @param markSeen when this process first saw the VMI's current evacuation mark (the informer's
   *     event): a new evacuation starts then, not when a worker got to it
   */
  static Decision decide(
      Parsed annotation, Optional<Instant> earliestKnown, Optional<Instant> markSeen, Instant now) {
    // Never later than now (a clock that stepped back must not push the start into the future).
    Instant from = markSeen.filter(seen -> seen.isBefore(now)).orElse(now);
    // Second precision, as the annotation is written: what we remember equals what we wrote.
    Instant begin = from.truncatedTo(ChronoUnit.SECONDS);
    if (earliestKnown.isEmpty()) {
      if (annotation instanceof Valid valid) {
        return new Decision.Keep(valid.start());
      }
      if (annotation instanceof Malformed malformed) {
        return new Decision.ReplaceMalformed(begin, malformed.raw());
      }
      return new Decision.Begin(begin);
    }
    Instant known = earliestKnown.get();
    if (annotation instanceof Valid valid) {
      // An earlier start shortens the deadline: that is always allowed.
      return valid.start().isAfter(known)
          ? new Decision.Restore(known, Decision.Tampering.MOVED_LATER, format(valid.start()))
          : new Decision.Keep(valid.start());
    }
    if (annotation instanceof Malformed malformed) {
      return new Decision.Restore(known, Decision.Tampering.MALFORMED, malformed.raw());
    }
    return new Decision.Restore(known, Decision.Tampering.REMOVED, null);
  }
}
