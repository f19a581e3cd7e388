package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvacuationPhase;
import io.kubernetes.client.extended.workqueue.ratelimiter.ItemExponentialFailureRateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this process remembers about the evacuations under way, keyed by VMI ({@code
 * namespace/name}) and checked against its UID. Nothing here is needed for correctness after a
 * restart (the API holds the drain start and our cordon marks); it keeps the deadline from moving
 * later within a run, the backoff after failures, the last obstacle for the deadline warning, and
 * the in-progress and deadline-used gauges.
 *
 * <p>The framework's {@code Result(true, delay)} requeues with {@code addAfter} and does not touch
 * the work queue's per-item failure counter, so the backoff is kept here, where it can be capped at
 * the deadline.
 */
final class EvacuationMemory {

  private record KnownStart(String uid, Instant start) {
    KnownStart earlier(KnownStart other) {
      if (!uid.equals(other.uid)) {
        return other; // a new VMI under the same name: its own evacuation
      }
      return other.start.isBefore(start) ? other : this;
    }
  }

  private final ItemExponentialFailureRateLimiter<String> failures;

  /** Last known obstacle per VMI UID, named in the deadline warning. */
  private final Map<String, String> blockers = new ConcurrentHashMap<>();

  /** Last failure of a step per VMI UID, after the last obstacle. */
  private final Map<String, String> lastFailures = new ConcurrentHashMap<>();

  /** From drain start to deadline, of one evacuation under way. */
  private record Window(String uid, Instant start, Instant deadline) {
    Window earlierDeadline(Window other) {
      if (!uid.equals(other.uid)) {
        return other;
      }
      return other.deadline.isBefore(deadline) ? other : this;
    }

    double used(Instant now) {
      long total = Duration.between(start, deadline).toMillis();
      long gone = Duration.between(start, now).toMillis();
      return total <= 0 ? 1 : Math.max(0, gone) / (double) total;
    }
  }

  /** VMI key to the phase its evacuation is in, for the by-phase gauge. */
  private final Map<String, EvacuationPhase> phases = new ConcurrentHashMap<>();

  /** VMI key to the window of its evacuation, for the in-progress and deadline-used gauges. */
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  /**
   * The earliest drain start seen or written per VMI: the annotation can be rewritten by anyone,
   * this record cannot, so the deadline only moves earlier. After a restart the annotation is the
   * record again.
   */
  private final Map<String, KnownStart> knownStarts = new ConcurrentHashMap<>();

  /** VMI UID to when its guest node's drain began (its first drain step; a hold is not counted). */
  private final Map<String, Instant> drainsBegan = new ConcurrentHashMap<>();

  EvacuationMemory(EvictionMetrics metrics, Duration maxFailureBackoff, Clock clock) {
    this.failures =
        new ItemExponentialFailureRateLimiter<>(Duration.ofSeconds(1), maxFailureBackoff);
    metrics.track(
        this,
        new EvictionMetrics.Source(
            windows::size, () -> maxDeadlineUsed(clock.instant()), phases::values));
  }

  /** The next delay after one more failure of this VMI's step (exponential, bounded). */
  Duration backoff(String key) {
    return failures.when(key);
  }

  /** Conflicts in a row per VMI key: bounded before its retries back off. */
  private final Map<String, Integer> conflicts = new ConcurrentHashMap<>();

  /** One more conflict in a row on this VMI's guest node; @return how many in a row now */
  int conflicted(String key) {
    return conflicts.merge(key, 1, Integer::sum);
  }

  /** The step succeeded: the next failure starts the backoff afresh. */
  void succeeded(String key) {
    failures.forget(key);
    conflicts.remove(key);
  }

  Optional<Instant> knownStart(String key, String uid) {
    KnownStart known = knownStarts.get(key);
    return known != null && known.uid().equals(uid) ? Optional.of(known.start()) : Optional.empty();
  }

  void recordStart(String key, String uid, Instant start) {
    knownStarts.merge(key, new KnownStart(uid, start), KnownStart::earlier);
  }

  /**
   * The VMI's evacuation is under way, from {@code start} to {@code deadline}; called at each step,
   * the earliest deadline is kept (Cluster API's settings may move it earlier).
   */
  void underWay(String key, String uid, Instant start, Instant deadline) {
    windows.merge(key, new Window(uid, start, deadline), Window::earlierDeadline);
  }

  /**
   * Of the evacuations under way, the largest share of the time from drain start to deadline gone
   * by {@code now}: above one half, the deadline is nearer than the start. 0 when there are none.
   */
  double maxDeadlineUsed(Instant now) {
    return windows.values().stream().mapToDouble(w -> w.used(now)).max().orElse(0);
  }

  /** The VMI's evacuation is in {@code phase}, as recorded on it. */
  void inPhase(String key, EvacuationPhase phase) {
    phases.put(key, phase);
  }

  /** When the guest node's drain for this VMI began: {@code now} at its first drain step. */
  Instant drainBegan(String uid, Instant now) {
    return drainsBegan.computeIfAbsent(uid, u -> now);
  }

  void blockedBy(String uid, String obstacle) {
    blockers.put(uid, obstacle);
    lastFailures.remove(uid);
  }

  /**
   * The last step failed (e.g. the guest API): said after the last pass's obstacle, which it does
   * not replace, so the deadline warning still counts the pods left.
   */
  void failedWith(String uid, String failure) {
    lastFailures.put(uid, failure);
  }

  Optional<String> blocker(String uid) {
    String obstacle = blockers.get(uid);
    String failure = lastFailures.get(uid);
    if (obstacle == null) {
      return Optional.ofNullable(failure);
    }
    return Optional.of(failure == null ? obstacle : obstacle + "; then " + failure);
  }

  /**
   * The evacuation of this VMI is over (deleted, called off, left to KubeVirt). With {@code
   * keepStart} the earliest start is kept: a VMI whose strategy flips away from External and back
   * must not get a later deadline.
   */
  void ended(String key, String uid, boolean keepStart) {
    if (!keepStart) {
      knownStarts.remove(key);
    }
    if (uid != null) {
      blockers.remove(uid);
      lastFailures.remove(uid);
      drainsBegan.remove(uid);
    }
    windows.remove(key);
    phases.remove(key);
  }

  /** The VMI is gone: forget everything about it. */
  void gone(String key) {
    succeeded(key);
    Window window = windows.get(key);
    ended(key, window == null ? null : window.uid(), false);
  }
}
