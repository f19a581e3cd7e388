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
 * How a blocking drain ({@link NodeDrainer#drain}) ended. Complete means every pod to evict is gone
 * (or, in a dry run, would go). An incomplete drain says which pods are still there, which of those
 * were blocked by which budgets, which failed and why, and whether the timeout or a lost connection
 * ended it.
 *
 * @param cordonedByThisDrain true if this drain made the node unschedulable (false: it already was)
 * @param usedEviction true if pods were evicted, false if deleted (eviction disabled or not served)
 * @param evicted pods evicted or deleted and gone (or replaced by a namesake); in a dry run, the
 *     pods that would be evicted (in a server dry run, those whose eviction the server accepted)
 * @param skipped pods left in place, with the reason: DaemonSet, mirror, filtered, deleted long
 *     ago, not waited for
 * @param pending pods still there when the drain ended (timeout, lost connection, failure)
 * @param pendingTerminating the pending pods that are being deleted
 * @param failed pods whose eviction failed for good, with the reason (e.g. several budgets select
 *     the pod, or the API server denied the request)
 * @param blockingBudgets for each pending pod a PodDisruptionBudget last refused to evict: the
 *     budget names (empty if unknown)
 * @param warnings kubectl-style warnings of the plan ("deleting Pods that declare no controller:
 *     ns/a")
 * @param interruption why the drain stopped early without timing out (lost the API server,
 *     interrupted), if it did
 */
public record DrainResult(
    String node,
    DryRun dryRun,
    boolean cordonedByThisDrain,
    boolean usedEviction,
    List<PodRef> evicted,
    List<SkippedPod> skipped,
    List<PodRef> pending,
    List<PodRef> pendingTerminating,
    Map<PodRef, String> failed,
    Map<PodRef, Set<String>> blockingBudgets,
    List<String> warnings,
    boolean timedOut,
    Optional<String> interruption,
    Duration elapsed) {

  public DrainResult {
    evicted = sortedCopy(evicted);
    skipped = List.copyOf(skipped);
    pending = sortedCopy(pending);
    pendingTerminating = sortedCopy(pendingTerminating);
    failed = Collections.unmodifiableMap(new TreeMap<>(failed));
    Map<PodRef, Set<String>> blocking = new TreeMap<>();
    blockingBudgets.forEach((k, v) -> blocking.put(k, Set.copyOf(v)));
    blockingBudgets = Collections.unmodifiableMap(blocking);
    warnings = List.copyOf(warnings);
  }

  public boolean isComplete() {
    return pending.isEmpty() && failed.isEmpty() && interruption.isEmpty();
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
      interruption.ifPresent(i -> s.append(i).append("; "));
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
}
