package dev.capk.vmieviction.drain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How to drain a node: kubectl drain's flags, plus what a program needs (concurrency, extra
 * filters, progress callbacks). Immutable; {@link Builder#build()} validates every value, so a
 * drain never starts with options it would fail on halfway.
 */
public final class DrainOptions {
  /** kubectl's default page size when listing the node's pods. */
  public static final int DEFAULT_CHUNK_SIZE = 500;

  /**
   * Evictions in flight at once. The API server handles evictions cheaply and the requests are
   * multiplexed on one HTTP/2 connection; the bound keeps a huge node from opening a flood of
   * requests.
   */
  public static final int DEFAULT_MAX_CONCURRENT_EVICTIONS = 32;

  /** kubectl waits 5 s before retrying an eviction a PodDisruptionBudget refused. */
  public static final Duration DEFAULT_EVICTION_RETRY_INTERVAL = Duration.ofSeconds(5);

  private final boolean force;
  private final boolean ignoreAllDaemonSets;
  private final boolean deleteEmptyDirData;
  private final int gracePeriodSeconds;
  private final Duration timeout;
  private final String podSelector;
  private final List<LabelSelectors.Requirement> podSelectorRequirements;
  private final boolean disableEviction;
  private final Duration skipWaitForDeleteTimeout;
  private final int chunkSize;
  private final DryRun dryRun;
  private final int maxConcurrentEvictions;
  private final Duration evictionRetryInterval;
  private final List<PodFilter> filters;
  private final DrainProgressListener progressListener;

  private DrainOptions(Builder b) {
    this.force = b.force;
    this.ignoreAllDaemonSets = b.ignoreAllDaemonSets;
    this.deleteEmptyDirData = b.deleteEmptyDirData;
    this.gracePeriodSeconds = b.gracePeriodSeconds;
    this.timeout = b.timeout;
    this.podSelector = b.podSelector.strip();
    this.podSelectorRequirements = LabelSelectors.parse(this.podSelector);
    this.disableEviction = b.disableEviction;
    this.skipWaitForDeleteTimeout = b.skipWaitForDeleteTimeout;
    this.chunkSize = b.chunkSize;
    this.dryRun = b.dryRun;
    this.maxConcurrentEvictions = b.maxConcurrentEvictions;
    this.evictionRetryInterval = b.evictionRetryInterval;
    this.filters = List.copyOf(b.filters);
    this.progressListener = b.progressListener;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** kubectl drain's defaults: no flags given. */
  public static DrainOptions defaults() {
    return builder().build();
  }

  /** A builder holding these options, to derive others. */
  public Builder toBuilder() {
    Builder b =
        new Builder()
            .force(force)
            .ignoreAllDaemonSets(ignoreAllDaemonSets)
            .deleteEmptyDirData(deleteEmptyDirData)
            .gracePeriodSeconds(gracePeriodSeconds)
            .timeout(timeout)
            .podSelector(podSelector)
            .disableEviction(disableEviction)
            .skipWaitForDeleteTimeout(skipWaitForDeleteTimeout)
            .chunkSize(chunkSize)
            .dryRun(dryRun)
            .maxConcurrentEvictions(maxConcurrentEvictions)
            .evictionRetryInterval(evictionRetryInterval)
            .progressListener(progressListener);
    filters.forEach(b::addFilter);
    return b;
  }

  /** Delete pods that declare no controller, and DaemonSet pods whose DaemonSet is gone. */
  public boolean force() {
    return force;
  }

  /** Leave DaemonSet-managed pods in place instead of refusing the drain. */
  public boolean ignoreAllDaemonSets() {
    return ignoreAllDaemonSets;
  }

  /** Evict pods that use emptyDir volumes (their data is lost) instead of refusing the drain. */
  public boolean deleteEmptyDirData() {
    return deleteEmptyDirData;
  }

  /** Seconds each pod gets to terminate; -1 means the pod's own terminationGracePeriodSeconds. */
  public int gracePeriodSeconds() {
    return gracePeriodSeconds;
  }

  /** How long the whole drain may take; {@link Duration#ZERO} means no limit. */
  public Duration timeout() {
    return timeout;
  }

  /** Only pods matching this label selector are drained; empty means all. */
  public String podSelector() {
    return podSelector;
  }

  /** Delete pods instead of evicting them: PodDisruptionBudgets are bypassed. */
  public boolean disableEviction() {
    return disableEviction;
  }

  /**
   * Pods deleted longer ago than this are not waited for; {@link Duration#ZERO} means wait for all.
   */
  public Duration skipWaitForDeleteTimeout() {
    return skipWaitForDeleteTimeout;
  }

  /** Page size when listing the node's pods; 0 lists them in one request. */
  public int chunkSize() {
    return chunkSize;
  }

  public DryRun dryRun() {
    return dryRun;
  }

  public int maxConcurrentEvictions() {
    return maxConcurrentEvictions;
  }

  /** Pause before retrying an eviction a PodDisruptionBudget refused. */
  public Duration evictionRetryInterval() {
    return evictionRetryInterval;
  }

  /** Caller filters, run after kubectl's built-in ones. */
  public List<PodFilter> filters() {
    return filters;
  }

  public DrainProgressListener progressListener() {
    return progressListener;
  }

  List<LabelSelectors.Requirement> podSelectorRequirements() {
    return podSelectorRequirements;
  }

  boolean hasTimeout() {
    return !timeout.isZero();
  }

  @Override
  public String toString() {
    // No listener or filter internals: this string goes into logs.
    return "DrainOptions{force="
        + force
        + ", ignoreAllDaemonSets="
        + ignoreAllDaemonSets
        + ", deleteEmptyDirData="
        + deleteEmptyDirData
        + ", gracePeriodSeconds="
        + gracePeriodSeconds
        + ", timeout="
        + timeout
        + ", podSelector='"
        + podSelector
        + "', disableEviction="
        + disableEviction
        + ", skipWaitForDeleteTimeout="
        + skipWaitForDeleteTimeout
        + ", chunkSize="
        + chunkSize
        + ", dryRun="
        + dryRun
        + ", maxConcurrentEvictions="
        + maxConcurrentEvictions
        + ", evictionRetryInterval="
        + evictionRetryInterval
        + ", extraFilters="
        + filters.size()
        + "}";
  }

  public static final class Builder {
    private boolean force;
    private boolean ignoreAllDaemonSets;
    private boolean deleteEmptyDirData;
    private int gracePeriodSeconds = -1;
    private Duration timeout = Duration.ZERO;
    private String podSelector = "";
    private boolean disableEviction;
    private Duration skipWaitForDeleteTimeout = Duration.ZERO;
    private int chunkSize = DEFAULT_CHUNK_SIZE;
    private DryRun dryRun = DryRun.NONE;
    private int maxConcurrentEvictions = DEFAULT_MAX_CONCURRENT_EVICTIONS;
    private Duration evictionRetryInterval = DEFAULT_EVICTION_RETRY_INTERVAL;
    private final List<PodFilter> filters = new ArrayList<>();
    private DrainProgressListener progressListener = DrainProgressListener.NONE;

    private Builder() {}

    public Builder force(boolean v) {
      force = v;
      return this;
    }

    public Builder ignoreAllDaemonSets(boolean v) {
      ignoreAllDaemonSets = v;
      return this;
    }

    public Builder deleteEmptyDirData(boolean v) {
      deleteEmptyDirData = v;
      return this;
    }

    /** -1: each pod's own terminationGracePeriodSeconds; 0: delete immediately. */
    public Builder gracePeriodSeconds(int v) {
      gracePeriodSeconds = v;
      return this;
    }

    /** {@link Duration#ZERO}: no limit. */
    public Builder timeout(Duration v) {
      timeout = v;
      return this;
    }

    public Builder podSelector(String v) {
      podSelector = v == null ? "" : v;
      return this;
    }

    public Builder disableEviction(boolean v) {
      disableEviction = v;
      return this;
    }

    /** {@link Duration#ZERO}: wait for every pod. */
    public Builder skipWaitForDeleteTimeout(Duration v) {
      skipWaitForDeleteTimeout = v;
      return this;
    }

    public Builder chunkSize(int v) {
      chunkSize = v;
      return this;
    }

    public Builder dryRun(DryRun v) {
      dryRun = v;
      return this;
    }

    public Builder maxConcurrentEvictions(int v) {
      maxConcurrentEvictions = v;
      return this;
    }

    public Builder evictionRetryInterval(Duration v) {
      evictionRetryInterval = v;
      return this;
    }

    public Builder addFilter(PodFilter f) {
      filters.add(Objects.requireNonNull(f, "filter"));
      return this;
    }

    public Builder progressListener(DrainProgressListener l) {
      progressListener = l;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the first bad value
     */
    public DrainOptions build() {
      if (gracePeriodSeconds < -1) {
        throw new IllegalArgumentException(
            "gracePeriodSeconds must be -1 (the pod's own) or >= 0, got " + gracePeriodSeconds);
      }
      requireNotNegative("timeout", timeout);
      requireNotNegative("skipWaitForDeleteTimeout", skipWaitForDeleteTimeout);
      if (chunkSize < 0) {
        throw new IllegalArgumentException(
            "chunkSize must be >= 0 (0: no paging), got " + chunkSize);
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
      if (progressListener == null) {
        throw new IllegalArgumentException(
            "progressListener must not be null (use DrainProgressListener.NONE)");
      }
      // Parses the selector: an invalid one fails here, before the drain changes anything.
      return new DrainOptions(this);
    }

    private static void requireNotNegative(String name, Duration d) {
      if (d == null || d.isNegative()) {
        throw new IllegalArgumentException(name + " must be zero or positive, got " + d);
      }
    }
  }
}
