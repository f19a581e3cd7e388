package dev.capk.vmieviction.drain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * How a drain ended. Complete means every pod to evict is gone (or, in a dry run, would go). An
 * incomplete drain says which pods are still there, which of those were blocked by which budgets,
 * which failed and why, and whether the timeout or a lost connection ended it.
 */
public final class DrainResult {
  private final String node;
  private final DryRun dryRun;
  private final boolean cordonedByThisDrain;
  private final boolean usedEviction;
  private final List<PodRef> evicted;
  private final List<SkippedPod> skipped;
  private final List<PodRef> pending;
  private final List<PodRef> pendingTerminating;
  private final Map<PodRef, String> failed;
  private final Set<PodRef> denied;
  private final Map<PodRef, Set<String>> blockingBudgets;
  private final List<String> warnings;
  private final boolean timedOut;
  private final String interruption;
  private final Duration elapsed;

  private DrainResult(Builder b) {
    this.node = b.node;
    this.dryRun = b.dryRun;
    this.cordonedByThisDrain = b.cordonedByThisDrain;
    this.usedEviction = b.usedEviction;
    this.evicted = sortedCopy(b.evicted);
    this.skipped = List.copyOf(b.skipped);
    this.pending = sortedCopy(b.pending);
    this.pendingTerminating = sortedCopy(b.pendingTerminating);
    this.failed = Collections.unmodifiableMap(new TreeMap<>(b.failed));
    this.denied = Collections.unmodifiableSet(new java.util.TreeSet<>(b.denied));
    Map<PodRef, Set<String>> blocking = new TreeMap<>();
    b.blockingBudgets.forEach((k, v) -> blocking.put(k, Set.copyOf(v)));
    this.blockingBudgets = Collections.unmodifiableMap(blocking);
    this.warnings = List.copyOf(b.warnings);
    this.timedOut = b.timedOut;
    this.interruption = b.interruption;
    this.elapsed = b.elapsed;
  }

  /** For callers' tests and for the engine: a result built field by field. */
  public static Builder builder(String node) {
    return new Builder(node);
  }

  public String node() {
    return node;
  }

  public DryRun dryRun() {
    return dryRun;
  }

  /** True if this drain made the node unschedulable (false: it already was). */
  public boolean cordonedByThisDrain() {
    return cordonedByThisDrain;
  }

  /** True if pods were evicted, false if deleted (eviction disabled or not served). */
  public boolean usedEviction() {
    return usedEviction;
  }

  /**
   * Pods evicted or deleted and gone (or replaced by a namesake). In a dry run: the pods that would
   * be evicted (in a server dry run, those whose eviction the server accepted).
   */
  public List<PodRef> evicted() {
    return evicted;
  }

  /**
   * Pods left in place, with the reason: DaemonSet, mirror, filtered, deleted long ago, not waited
   * for.
   */
  public List<SkippedPod> skipped() {
    return skipped;
  }

  /** Pods still there when the drain ended (timeout, lost connection). */
  public List<PodRef> pending() {
    return pending;
  }

  /** The pending pods whose eviction or deletion was accepted: they are terminating. */
  public List<PodRef> pendingTerminating() {
    return pendingTerminating;
  }

  /** Pods whose eviction failed for good, with the reason (e.g. several budgets select the pod). */
  public Map<PodRef, String> failed() {
    return failed;
  }

  /**
   * The failed pods whose eviction (or deletion) the API server refused to our identity (401/403).
   */
  public Set<PodRef> denied() {
    return denied;
  }

  /**
   * For each pending pod a PodDisruptionBudget last refused to evict: the budget names (empty if
   * unknown).
   */
  public Map<PodRef, Set<String>> blockingBudgets() {
    return blockingBudgets;
  }

  /** kubectl-style warnings of the plan ("deleting Pods that declare no controller: ns/a"). */
  public List<String> warnings() {
    return warnings;
  }

  public boolean timedOut() {
    return timedOut;
  }

  /**
   * Why the drain stopped early without timing out (lost the API server, interrupted), if it did.
   */
  public Optional<String> interruption() {
    return Optional.ofNullable(interruption);
  }

  public Duration elapsed() {
    return elapsed;
  }

  public boolean isComplete() {
    return pending.isEmpty() && failed.isEmpty() && interruption == null;
  }

  /** One line for logs and events. */
  public String summary() {
    StringBuilder s = new StringBuilder("node/").append(node);
    String suffix =
        switch (dryRun) {
          case NONE -> "";
          case CLIENT -> " (dry run)";
          case SERVER -> " (server dry run)";
        };
    if (isComplete()) {
      s.append(" drained").append(suffix).append(": ");
    } else {
      s.append(" not drained").append(suffix).append(": ");
      if (timedOut) {
        s.append("timed out; ");
      }
      if (interruption != null) {
        s.append(interruption).append("; ");
      }
    }
    s.append(evicted.size())
        .append(usedEviction || dryRun != DryRun.NONE ? " evicted" : " deleted");
    if (!pending.isEmpty()) {
      s.append(", ")
          .append(pending.size())
          .append(" pending (")
          .append(pending.stream().map(this::describePending).collect(Collectors.joining(", ")))
          .append(")");
    }
    if (!failed.isEmpty()) {
      s.append(", ")
          .append(failed.size())
          .append(" failed (")
          .append(
              failed.entrySet().stream()
                  .map(e -> e.getKey() + ": " + e.getValue())
                  .collect(Collectors.joining("; ")))
          .append(")");
    }
    s.append(", ").append(skipped.size()).append(" skipped");
    s.append(", in ").append(elapsed.toMillis()).append(" ms");
    return s.toString();
  }

  private String describePending(PodRef p) {
    Set<String> budgets = blockingBudgets.get(p);
    if (budgets != null) {
      return p
          + " blocked by "
          + (budgets.isEmpty()
              ? "a PodDisruptionBudget"
              : "PodDisruptionBudget "
                  + budgets.stream().sorted().collect(Collectors.joining(", ")));
    }
    if (pendingTerminating.contains(p)) {
      return p + " terminating";
    }
    return p + " not evicted yet";
  }

  @Override
  public String toString() {
    return summary();
  }

  private static List<PodRef> sortedCopy(List<PodRef> l) {
    List<PodRef> c = new ArrayList<>(l);
    Collections.sort(c);
    return List.copyOf(c);
  }

  public static final class Builder {
    private final String node;
    private DryRun dryRun = DryRun.NONE;
    private boolean cordonedByThisDrain;
    private boolean usedEviction = true;
    private List<PodRef> evicted = List.of();
    private List<SkippedPod> skipped = List.of();
    private List<PodRef> pending = List.of();
    private List<PodRef> pendingTerminating = List.of();
    private Map<PodRef, String> failed = Map.of();
    private Set<PodRef> denied = Set.of();
    private Map<PodRef, Set<String>> blockingBudgets = Map.of();
    private List<String> warnings = List.of();
    private boolean timedOut;
    private String interruption;
    private Duration elapsed = Duration.ZERO;

    private Builder(String node) {
      this.node = node;
    }

    public Builder dryRun(DryRun v) {
      dryRun = v;
      return this;
    }

    public Builder cordonedByThisDrain(boolean v) {
      cordonedByThisDrain = v;
      return this;
    }

    public Builder usedEviction(boolean v) {
      usedEviction = v;
      return this;
    }

    public Builder evicted(List<PodRef> v) {
      evicted = v;
      return this;
    }

    public Builder skipped(List<SkippedPod> v) {
      skipped = v;
      return this;
    }

    public Builder pending(List<PodRef> v) {
      pending = v;
      return this;
    }

    public Builder pendingTerminating(List<PodRef> v) {
      pendingTerminating = v;
      return this;
    }

    public Builder failed(Map<PodRef, String> v) {
      failed = v;
      return this;
    }

    public Builder denied(Set<PodRef> v) {
      denied = v;
      return this;
    }

    public Builder blockingBudgets(Map<PodRef, Set<String>> v) {
      blockingBudgets = v;
      return this;
    }

    public Builder warnings(List<String> v) {
      warnings = v;
      return this;
    }

    public Builder timedOut(boolean v) {
      timedOut = v;
      return this;
    }

    public Builder interruption(String v) {
      interruption = v;
      return this;
    }

    public Builder elapsed(Duration v) {
      elapsed = v;
      return this;
    }

    public DrainResult build() {
      return new DrainResult(this);
    }
  }
}
