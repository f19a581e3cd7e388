package dev.capk.vmieviction.eviction;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What one bounded drain pass of a guest node came to, in the reconciler's terms.
 *
 * @param complete every pod that had to go is gone
 * @param evicted pods evicted or deleted during this pass
 * @param pending pods still on the node that have to go, failed ones included
 * @param blockingBudgets for each blocked pod ({@code namespace/name}), the budgets that refused it
 * @param failures pods that cannot be evicted at all, with why
 * @param refusals non-empty when the drain engine refused to start (kubectl's "cannot delete")
 * @param summary one line for logs and events
 */
public record DrainPass(
    boolean complete,
    int evicted,
    int pending,
    Map<String, Set<String>> blockingBudgets,
    List<String> failures,
    List<String> refusals,
    String summary) {

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
