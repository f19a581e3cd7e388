package dev.capk.vmieviction.eviction;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * What one step of a guest node's drain came to, in the reconciler's terms.
 *
 * @param complete every pod that had to go is gone
 * @param evicted pods evicted or deleted by the drain so far
 * @param pending pods still on the node that have to go, failed ones included
 * @param blockingBudgets for each blocked pod ({@code namespace/name}), the budgets that refused it
 * @param failures pods that cannot be evicted at all, with why
 * @param refusals non-empty when the drain engine refused to start (kubectl's "cannot delete")
 * @param summary one line for logs and events
 * @param terminating the pending pods that are being deleted (a watch sees them go)
 * @param nextTry when the next eviction of a waiting pod is due; empty when only deletions are
 *     awaited
 */
public record DrainPass(
    boolean complete,
    int evicted,
    int pending,
    Map<String, Set<String>> blockingBudgets,
    List<String> failures,
    List<String> refusals,
    String summary,
    int terminating,
    Optional<Instant> nextTry) {

  /** A step with nothing due later (a finished, refused or only-terminating drain). */
  public DrainPass(
      boolean complete,
      int evicted,
      int pending,
      Map<String, Set<String>> blockingBudgets,
      List<String> failures,
      List<String> refusals,
      String summary) {
    this(
        complete,
        evicted,
        pending,
        blockingBudgets,
        failures,
        refusals,
        summary,
        0,
        Optional.empty());
  }

  public DrainPass {
    blockingBudgets = new TreeMap<>(blockingBudgets);
    failures = List.copyOf(failures);
    refusals = List.copyOf(refusals);
  }

  public boolean refused() {
    return !refusals.isEmpty();
  }

  /** What stands in the way, for the event that warns at the deadline. */
  public String blockers() {
    if (refused()) {
      return "drain refused: " + String.join("; ", refusals);
    }
    StringBuilder sb = new StringBuilder();
    if (!blockingBudgets.isEmpty()) {
      sb.append("PodDisruptionBudgets ");
      blockingBudgets.forEach(
          (pod, budgets) ->
              sb.append(String.join(",", budgets)).append(" (pod ").append(pod).append(") "));
    }
    if (!failures.isEmpty()) {
      sb.append("failed pods: ").append(String.join("; ", failures)).append(' ');
    }
    if (sb.length() == 0) {
      sb.append(pending).append(" pod(s) still terminating");
    }
    return sb.toString().trim();
  }
}
