package dev.capk.vmieviction.drain;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * How to drain a node: kubectl drain's flags, plus the eviction concurrency and retry interval, all
 * validated here, so a drain never starts with options it would fail on halfway.
 *
 * @param force delete pods that declare no controller, and DaemonSet pods whose DaemonSet is gone
 * @param ignoreAllDaemonSets leave DaemonSet-managed pods in place instead of refusing the drain
 * @param deleteEmptyDirData evict pods that use emptyDir volumes (their data is lost) instead of
 *     refusing the drain
 * @param gracePeriodSeconds seconds each pod gets to terminate; -1: the pod's own
 * @param timeout how long the whole drain may take; {@link Duration#ZERO}: no limit
 * @param podSelector only pods matching this label selector are drained; empty: all
 * @param disableEviction delete pods instead of evicting them: PodDisruptionBudgets are bypassed
 * @param skipWaitForDeleteTimeout pods deleted longer ago than this are not waited for; {@link
 *     Duration#ZERO}: wait for all
 * @param chunkSize page size when listing the node's pods; 0 lists them in one request
 * @param evictionRetryInterval pause before retrying an eviction a PodDisruptionBudget refused
 */
public record DrainOptions(
    boolean force,
    boolean ignoreAllDaemonSets,
    boolean deleteEmptyDirData,
    int gracePeriodSeconds,
    Duration timeout,
    String podSelector,
    boolean disableEviction,
    Duration skipWaitForDeleteTimeout,
    int chunkSize,
    DryRun dryRun,
    int maxConcurrentEvictions,
    Duration evictionRetryInterval) {
  public static final int DEFAULT_CHUNK_SIZE = 500;

  /** Evictions in flight at once: the bound keeps a huge node from sending a flood. */
  public static final int DEFAULT_MAX_CONCURRENT_EVICTIONS = 32;

  /** kubectl's. */
  public static final Duration DEFAULT_EVICTION_RETRY_INTERVAL = Duration.ofSeconds(5);

  /**
   * @throws IllegalArgumentException naming the first bad value
   */
  public DrainOptions {
    if (gracePeriodSeconds < -1) {
      throw new IllegalArgumentException(
          "gracePeriodSeconds must be -1 (the pod's own) or >= 0, got " + gracePeriodSeconds);
    }
    requireNotNegative("timeout", timeout);
    requireNotNegative("skipWaitForDeleteTimeout", skipWaitForDeleteTimeout);
    if (chunkSize < 0) {
      throw new IllegalArgumentException("chunkSize must be >= 0 (0: no paging), got " + chunkSize);
    }
    if (dryRun == null) {
      throw new IllegalArgumentException("dryRun must be NONE, CLIENT or SERVER, got null");
    }
    if (maxConcurrentEvictions < 1) {
      throw new IllegalArgumentException(
          "maxConcurrentEvictions must be >= 1, got " + maxConcurrentEvictions);
    }
    if (evictionRetryInterval == null
        || evictionRetryInterval.isNegative()
        || evictionRetryInterval.isZero()) {
      throw new IllegalArgumentException(
          "evictionRetryInterval must be positive, got " + evictionRetryInterval);
    }
    podSelector = podSelector == null ? "" : podSelector.strip();
    LabelSelectors.check(podSelector);
  }

  private static void requireNotNegative(String name, Duration d) {
    if (d == null || d.isNegative()) {
      throw new IllegalArgumentException(name + " must be zero or positive, got " + d);
    }
  }

  /** kubectl drain's defaults with what {@code set} changes, all then validated. */
  public static DrainOptions of(Consumer<Builder> set) {
    Builder b = new Builder();
    set.accept(b);
    return new DrainOptions(
        b.force,
        b.ignoreAllDaemonSets,
        b.deleteEmptyDirData,
        b.gracePeriodSeconds,
        b.timeout,
        b.podSelector,
        b.disableEviction,
        b.skipWaitForDeleteTimeout,
        b.chunkSize,
        b.dryRun,
        b.maxConcurrentEvictions,
        b.evictionRetryInterval);
  }

  public static DrainOptions defaults() {
    return of(b -> {});
  }

  /** kubectl drain's defaults, for {@link #of}'s caller to change. */
  public static final class Builder {
    public boolean force;
    public boolean ignoreAllDaemonSets;
    public boolean deleteEmptyDirData;
    public int gracePeriodSeconds = -1;
    public Duration timeout = Duration.ZERO;
    public String podSelector = "";
    public boolean disableEviction;
    public Duration skipWaitForDeleteTimeout = Duration.ZERO;
    public int chunkSize = DEFAULT_CHUNK_SIZE;
    public DryRun dryRun = DryRun.NONE;
    public int maxConcurrentEvictions = DEFAULT_MAX_CONCURRENT_EVICTIONS;
    public Duration evictionRetryInterval = DEFAULT_EVICTION_RETRY_INTERVAL;

    private Builder() {}
  }
}
