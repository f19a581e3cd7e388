package dev.capk.vmieviction.eviction;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * What to do with the drain start annotation of a VMI being evacuated, given what it says now and
 * the earliest start this controller has seen or written for the VMI's UID. The deadline only ever
 * moves earlier: a start that was removed, moved later or made malformed in the middle of a drain
 * is restored, never followed. Pure.
 */
public sealed interface DrainStartDecision {

  /** The start the deadline counts from. */
  Instant start();

  /** The annotation holds a usable start, no later than any we knew: keep it. */
  record Keep(Instant start) implements DrainStartDecision {}

  /**
   * No start known and none recorded: a new evacuation, starting when this process first saw the
   * mark (now, if it did not see it); write it.
   */
  record Begin(Instant start) implements DrainStartDecision {}

  /**
   * No start known and the annotation is unusable: replace it by the mark's first sighting (or
   * now), with a warning.
   */
  record ReplaceMalformed(Instant start, String raw) implements DrainStartDecision {}

  /**
   * Mid-drain, the annotation no longer holds the earliest start: write that back, with a warning.
   */
  record Restore(Instant start, Tampering tampering, String raw) implements DrainStartDecision {}

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

  /**
   * @param annotation what the annotation says now (parsed against the same {@code now})
   * @param earliestKnown the earliest start seen or written for this VMI's UID by this process
   */
  static DrainStartDecision decide(
      DrainStartTime.Parsed annotation, Optional<Instant> earliestKnown, Instant now) {
    return decide(annotation, earliestKnown, Optional.empty(), now);
  }

  /**
   * @param markSeen when this process first saw the VMI's current evacuation mark (the informer's
   *     event): a new evacuation starts then, not when a worker got to it
   */
  static DrainStartDecision decide(
      DrainStartTime.Parsed annotation,
      Optional<Instant> earliestKnown,
      Optional<Instant> markSeen,
      Instant now) {
    // Never later than now (a clock that stepped back must not push the start into the future).
    Instant from = markSeen.filter(seen -> seen.isBefore(now)).orElse(now);
    // Second precision, as the annotation is written: what we remember equals what we wrote.
    Instant begin = from.truncatedTo(ChronoUnit.SECONDS);
    if (earliestKnown.isEmpty()) {
      if (annotation instanceof DrainStartTime.Valid valid) {
        return new Keep(valid.start());
      }
      if (annotation instanceof DrainStartTime.Malformed malformed) {
        return new ReplaceMalformed(begin, malformed.raw());
      }
      return new Begin(begin);
    }
    Instant known = earliestKnown.get();
    if (annotation instanceof DrainStartTime.Valid valid) {
      // An earlier start shortens the deadline: that is always allowed.
      return valid.start().isAfter(known)
          ? new Restore(known, Tampering.MOVED_LATER, DrainStartTime.format(valid.start()))
          : new Keep(valid.start());
    }
    if (annotation instanceof DrainStartTime.Malformed malformed) {
      return new Restore(known, Tampering.MALFORMED, malformed.raw());
    }
    return new Restore(known, Tampering.REMOVED, null);
  }
}
