package dev.capk.vmieviction.eviction;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * When an evacuation must end, whatever the guest says: start + drain timeout, or the deadline
 * CAPK's own controller already wrote (clusters migrating from CAPK keep their promise). Pure.
 */
public record Deadline(Instant at, Source source) {

  /** Where the deadline came from, for messages. */
  public enum Source {
    DRAIN_TIMEOUT,
    CAPK_GRACE_TIME
  }

  /**
   * @param start the recorded drain start
   * @param timeout the global drain timeout
   * @param capkGraceTime the raw value of CAPK's {@code vmi-deletion-grace-time} annotation, if any;
   *     ignored when unparsable, and honoured only when earlier than start + timeout: a grace time
   *     far in the future must not lift the global timeout
   */
  public static Deadline of(Instant start, Duration timeout, String capkGraceTime) {
    Instant ours = start.plus(timeout);
    Optional<Instant> capk = DrainStartTime.parseRfc3339(capkGraceTime);
    if (capk.isPresent() && capk.get().isBefore(ours)) {
      return new Deadline(capk.get(), Source.CAPK_GRACE_TIME);
    }
    return new Deadline(ours, Source.DRAIN_TIMEOUT);
  }

  /** True at and after the deadline. */
  public boolean passed(Instant now) {
    return !now.isBefore(at);
  }

  /** Time left, never negative. */
  public Duration remaining(Instant now) {
    Duration d = Duration.between(now, at);
    return d.isNegative() ? Duration.ZERO : d;
  }

  /**
   * The delay before looking again: the wanted delay, but never later than the deadline (plus a
   * small margin so the next reconcile sees it passed), and never negative.
   */
  public Duration cap(Instant now, Duration wanted) {
    Duration untilDeadline = remaining(now).plus(DEADLINE_MARGIN);
    Duration w = wanted.isNegative() ? Duration.ZERO : wanted;
    return w.compareTo(untilDeadline) < 0 ? w : untilDeadline;
  }

  /**
   * How long one drain pass may block a worker: the per-attempt timeout, cut to what is left before
   * the deadline, and at least a second so that a pass can do something.
   */
  public Duration passTimeout(Instant now, Duration attemptTimeout) {
    Duration left = remaining(now);
    Duration t = attemptTimeout.compareTo(left) < 0 ? attemptTimeout : left;
    return t.compareTo(MIN_PASS) < 0 ? MIN_PASS : t;
  }

  /** Requeue this much after the deadline so the clock has surely passed it. */
  static final Duration DEADLINE_MARGIN = Duration.ofMillis(200);

  static final Duration MIN_PASS = Duration.ofSeconds(1);
}
