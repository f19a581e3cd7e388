package dev.capk.vmieviction.workload;

import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Admits reconcile steps to one guest cluster without ever making a worker wait: a token bucket
 * (client-side rate limit, as client-go's QPS and burst) and a bound on steps talking to the
 * cluster at once. A step that is not admitted is told when to come back, and its worker moves on
 * to other tenants' work; so a tenant whose API server is slow holds at most {@code maxInFlight}
 * workers, and a busy tenant cannot use up another's share.
 *
 * <p>A step takes one token to enter and pays for the rest of its requests when it leaves (it
 * cannot know beforehand how many pods are due), so the bucket may run into debt that later steps
 * wait out.
 */
public final class TenantThrottle {

  /** How soon a step refused for lack of a free slot looks again. */
  static final Duration BUSY_RETRY = Duration.ofMillis(250);

  /** The limits of one guest cluster. */
  public record Limits(double qps, int burst, int maxInFlight) {
    public Limits {
      if (!(qps > 0) || burst < 1 || maxInFlight < 1) {
        throw new IllegalArgumentException(
            "need qps > 0, burst >= 1 and maxInFlight >= 1, got %s, %d, %d"
                .formatted(qps, burst, maxInFlight));
      }
    }

    /** kubectl's client limits (QPS 50, burst 300); four steps of one tenant at once. */
    public static Limits defaults() {
      return new Limits(50, 300, 4);
    }
  }

  private final Limits limits;
  private final LongSupplier nanoTime;
  private double tokens;
  private long refilledAt;
  private int inFlight;

  public TenantThrottle(Limits limits) {
    this(limits, System::nanoTime);
  }

  TenantThrottle(Limits limits, LongSupplier nanoTime) {
    this.limits = limits;
    this.nanoTime = nanoTime;
    this.tokens = limits.burst();
    this.refilledAt = nanoTime.getAsLong();
  }

  /**
   * Lets a step in, or says when to come back.
   *
   * @return empty when admitted (then {@link #leave} must follow), else the wait
   */
  public synchronized Optional<Duration> tryEnter() {
    return tryEnter(false);
  }

  /**
   * As {@link #tryEnter()}; a step that can finish a drain now (its guest node's pods just left:
   * the tenant's API server is answering) is always let in, and pays for its requests like any.
   */
  public synchronized Optional<Duration> tryEnter(boolean finishing) {
    refill();
    if (finishing) {
      tokens -= 1;
      inFlight++;
      return Optional.empty();
    }
    if (inFlight >= limits.maxInFlight()) {
      return Optional.of(BUSY_RETRY);
    }
    if (tokens < 1) {
      long nanos = (long) Math.ceil((1 - tokens) / limits.qps() * 1e9);
      return Optional.of(Duration.ofNanos(Math.max(nanos, 1_000_000)));
    }
    tokens -= 1;
    inFlight++;
    return Optional.empty();
  }

  /**
   * The step is over.
   *
   * @param requests the requests it sent in all (the one paid on entry included)
   */
  public synchronized void leave(int requests) {
    inFlight = Math.max(0, inFlight - 1);
    refill();
    tokens -= Math.max(0, requests - 1);
  }

  public synchronized int inFlight() {
    return inFlight;
  }

  private void refill() {
    long now = nanoTime.getAsLong();
    tokens = Math.min(limits.burst(), tokens + (now - refilledAt) / 1e9 * limits.qps());
    refilledAt = now;
  }
}
