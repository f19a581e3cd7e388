package dev.capk.vmieviction.time;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * A moment by which work must end. One this process sets for its own work ({@link #after}) runs on
 * the monotonic clock (a wall clock step does not move it); one recorded in the API ({@link #at})
 * on the wall clock that wrote it. {@link #NONE} never passes.
 */
public final class Deadline {
  private static final Instant BASE = Instant.now();
  private static final long BASE_NANOS = System.nanoTime();

  /** {@link System#nanoTime()} as a clock. */
  private static final InstantSource MONOTONIC =
      () -> BASE.plusNanos(System.nanoTime() - BASE_NANOS);

  /** Stands for "no time left to count" where a duration must be given. */
  private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE);

  /** No deadline: never passes, always leaves all the time wanted. */
  public static final Deadline NONE = new Deadline(null, MONOTONIC);

  private final Instant at;
  private final InstantSource clock;

  private Deadline(Instant at, InstantSource clock) {
    this.at = at;
    this.clock = clock;
  }

  /** {@code timeout} from now on the monotonic clock; zero or negative: already passed. */
  public static Deadline after(Duration timeout) {
    Duration t = timeout.isNegative() ? Duration.ZERO : timeout;
    return new Deadline(MONOTONIC.instant().plus(t), MONOTONIC);
  }

  public static Deadline at(Instant at, Clock clock) {
    return new Deadline(at, clock);
  }

  public boolean none() {
    return at == null;
  }

  /** The instant itself; not for {@link #NONE}. */
  public Instant at() {
    if (at == null) {
      throw new IllegalStateException("no deadline");
    }
    return at;
  }

  public boolean passed() {
    return at != null && !clock.instant().isBefore(at);
  }

  public Duration remaining() {
    if (at == null) {
      return FOREVER;
    }
    Duration d = Duration.between(clock.instant(), at);
    return d.isNegative() ? Duration.ZERO : d;
  }

  /** {@code wanted}, or less if the deadline comes first; never negative. */
  public Duration cap(Duration wanted) {
    Duration w = wanted.isNegative() ? Duration.ZERO : wanted;
    Duration left = remaining();
    return w.compareTo(left) < 0 ? w : left;
  }

  @Override
  public String toString() {
    return at == null ? "none" : at.toString();
  }
}
