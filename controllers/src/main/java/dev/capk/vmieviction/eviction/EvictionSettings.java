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
 * @param maxConcurrentEvacuationsPerCluster worker VMIs of one tenant Cluster evacuated at once,
 *     unless the Cluster's annotation says otherwise
 * @param drainReserve a VMI held by the tenant-safety policy goes ahead no later than its deadline
 *     minus this, and a live migration not finished by then is cancelled for the guest drain
 * @param liveMigration whether a LiveMigratable VMI is live-migrated before any drain, unless its
 *     Cluster's annotation says otherwise
 * @param migrationAttempts live migrations tried per evacuation before the fallback to the drain
 */
public record EvictionSettings(
    Duration drainTimeout,
    Duration retryInterval,
    Duration attemptTimeout,
    String fallbackStrategy,
    Duration maxFailureBackoff,
    EvacuationLimit maxConcurrentEvacuationsPerCluster,
    Duration drainReserve,
    LiveMigrationPolicy liveMigration,
    int migrationAttempts) {

  public static final Duration DEFAULT_DRAIN_RESERVE = Duration.ofMinutes(3);
  public static final int DEFAULT_MIGRATION_ATTEMPTS = 2;

  /** No per-cluster limit, the default reserve, live migration never tried. */
  public EvictionSettings(
      Duration drainTimeout,
      Duration retryInterval,
      Duration attemptTimeout,
      String fallbackStrategy,
      Duration maxFailureBackoff) {
    this(
        drainTimeout,
        retryInterval,
        attemptTimeout,
        fallbackStrategy,
        maxFailureBackoff,
        EvacuationLimit.UNLIMITED,
        DEFAULT_DRAIN_RESERVE,
        LiveMigrationPolicy.NEVER,
        DEFAULT_MIGRATION_ATTEMPTS);
  }

  public EvictionSettings {
    if (maxConcurrentEvacuationsPerCluster == null) {
      throw new IllegalArgumentException("maxConcurrentEvacuationsPerCluster must be set");
    }
    if (drainReserve == null || drainReserve.isNegative()) {
      throw new IllegalArgumentException("drainReserve must not be negative, got " + drainReserve);
    }
    if (liveMigration == null) {
      throw new IllegalArgumentException("liveMigration must be set");
    }
    if (migrationAttempts < 1) {
      throw new IllegalArgumentException(
          "migrationAttempts must be at least 1, got " + migrationAttempts);
    }
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
