package dev.capk.vmieviction.eviction;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * The reconciler's knobs, from the flags ({@code ManagerOptions} checks them).
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

  /**
   * How many worker VMIs of one tenant Cluster may be evacuated at once: a count ({@code 0} =
   * unlimited) or a percentage of the Cluster's VMIs ({@code 25%}, never less than one VMI).
   * Written as the flag {@code --max-concurrent-evacuations-per-cluster} or the Cluster annotation
   * {@code capk.cluster.x-k8s.io/max-concurrent-evacuations}. Pure.
   *
   * @param value the count, or the percentage when {@code percent}
   */
  public record EvacuationLimit(int value, boolean percent) {

    public static final EvacuationLimit UNLIMITED = new EvacuationLimit(0, false);

    /** {@code "3"}, {@code "0"} or {@code "25%"}; empty for anything else. */
    public static Optional<EvacuationLimit> parse(String raw) {
      if (raw == null) {
        return Optional.empty();
      }
      String s = raw.trim();
      boolean percent = s.endsWith("%");
      String digits = percent ? s.substring(0, s.length() - 1) : s;
      if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(Character::isDigit)) {
        return Optional.empty();
      }
      int value = Integer.parseInt(digits);
      return percent && (value < 1 || value > 100)
          ? Optional.empty()
          : Optional.of(new EvacuationLimit(value, percent));
    }

    public boolean unlimited() {
      return !percent && value == 0;
    }

    /**
     * The number of VMIs this limit allows for a Cluster of {@code clusterVmis} VMIs: a percentage
     * rounds down, and is at least one. {@link Integer#MAX_VALUE} when unlimited.
     */
    public int resolve(int clusterVmis) {
      return unlimited()
          ? Integer.MAX_VALUE
          : percent ? Math.max(1, (int) ((long) clusterVmis * value / 100)) : value;
    }

    @Override
    public String toString() {
      return value + (percent ? "%" : "");
    }
  }

  /** Whether an External VMI is live-migrated before its guest node is drained. */
  public enum LiveMigrationPolicy {
    /** Today's evacuation: drain the guest node, delete the VMI. */
    NEVER,
    /** Live-migrate a LiveMigratable VMI; drain and delete only as the fallback. */
    PREFER;

    /** As flags and annotations spell it. */
    public final String value = name().toLowerCase(Locale.ROOT);

    /** The policy a flag or annotation value names, or empty when it names none. */
    public static Optional<LiveMigrationPolicy> parse(String raw) {
      String v = raw == null ? null : raw.trim().toLowerCase(Locale.ROOT);
      return Arrays.stream(values()).filter(p -> p.value.equals(v)).findFirst();
    }
  }
}
