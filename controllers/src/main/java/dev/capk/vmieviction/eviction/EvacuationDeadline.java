package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.time.Deadline;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * An evacuation's deadline and what follows from it for the reconciler: when the evacuation must
 * end whatever the guest says (start + drain timeout, or the deadline CAPK's own controller already
 * wrote: clusters migrating from CAPK keep their promise), when to look again, how long a drain
 * pass may last. Pure, given the clock.
 */
final class EvacuationDeadline {
  private EvacuationDeadline() {}

  /** Requeue this much after the deadline so the clock has surely passed it. */
  static final Duration DEADLINE_MARGIN = Duration.ofMillis(200);

  static final Duration MIN_PASS = Duration.ofSeconds(1);

  /**
   * @param start the recorded drain start
   * @param timeout the global drain timeout
   * @param capkGraceTime the raw value of CAPK's {@code vmi-deletion-grace-time} annotation, if
   *     any; ignored when unparsable, and honoured only when earlier than start + timeout: a grace
   *     time far in the future must not lift the global timeout
   */
  static Deadline of(Instant start, Duration timeout, String capkGraceTime, Clock clock) {
    Instant ours = start.plus(timeout);
    Optional<Instant> capk = DrainStartTime.parseRfc3339(capkGraceTime);
    return Deadline.at(capk.isPresent() && capk.get().isBefore(ours) ? capk.get() : ours, clock);
  }

  /**
   * True when CAPK's grace time, not start + timeout, set {@code deadline}: it can only be earlier.
   */
  static boolean fromCapkGraceTime(Deadline deadline, Instant start, Duration timeout) {
    return deadline.at().isBefore(start.plus(timeout));
  }

  /**
   * The delay before looking again: the wanted delay, but never later than the deadline (plus a
   * small margin so the next reconcile sees it passed), and never negative.
   */
  static Duration requeueDelay(Deadline deadline, Duration wanted) {
    Duration w = wanted.isNegative() ? Duration.ZERO : wanted;
    Duration untilDeadline = deadline.remaining().plus(DEADLINE_MARGIN);
    return w.compareTo(untilDeadline) < 0 ? w : untilDeadline;
  }

  /**
   * How long one drain pass may block a worker: the per-attempt timeout, cut to what is left before
   * the deadline, and at least a second so that a pass can do something.
   */
  static Duration passTimeout(Deadline deadline, Duration attemptTimeout) {
    Duration t = deadline.cap(attemptTimeout);
    return t.compareTo(MIN_PASS) < 0 ? MIN_PASS : t;
  }
}
