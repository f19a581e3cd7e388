package dev.capk.vmieviction.eviction;

import java.time.Duration;

/**
 * The reconciler's knobs.
 *
 * @param drainTimeout the global deadline, counted from the drain start
 * @param retryInterval how long to wait before the next drain pass of an unfinished drain
 * @param attemptTimeout the longest one drain pass may hold a worker
 * @param fallbackStrategy the eviction strategy assumed when neither the VMI nor KubeVirt says
 * @param maxFailureBackoff the longest wait after repeated failures (still capped at the deadline)
 */
public record EvictionSettings(
    Duration drainTimeout,
    Duration retryInterval,
    Duration attemptTimeout,
    String fallbackStrategy,
    Duration maxFailureBackoff) {

  public EvictionSettings {
    requirePositive("drainTimeout", drainTimeout);
    requirePositive("retryInterval", retryInterval);
    requirePositive("attemptTimeout", attemptTimeout);
    requirePositive("maxFailureBackoff", maxFailureBackoff);
    if (fallbackStrategy == null || fallbackStrategy.isBlank()) {
      throw new IllegalArgumentException("fallbackStrategy must be set");
    }
  }

  private static void requirePositive(String name, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
  }
}
