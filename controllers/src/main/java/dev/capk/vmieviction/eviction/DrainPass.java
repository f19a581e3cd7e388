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
 * @param podsLeft for each pod still on the node ({@code namespace/name}), why it is still there
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
    Optional<Instant> nextTry,
    Map<String, String> podsLeft) {

  /** How many pods a message names before it only counts the others. */
  static final int NAMED_PODS = 10;

  /** The longest reason given for one pod: a server's message can be long. */
  static final int MAX_REASON = 160;

  /**
   * The longest list of pods named: with the deadline warning's own words and the last failure it
   * stays within an Event's 1,024 characters, so the count of the others is never cut off.
   */
  static final int MAX_NAMED_TEXT = 640;

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
        Optional.empty(),
        Map.of());
  }

  public DrainPass {
    blockingBudgets = new TreeMap<>(blockingBudgets);
    failures = List.copyOf(failures);
    refusals = List.copyOf(refusals);
    podsLeft = new TreeMap<>(podsLeft);
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

  /**
   * The pods still on the node and why each stays, the first {@value #NAMED_PODS} by name (fewer
   * when their reasons are long) and then how many more; what {@link #blockers()} says when the
   * step did not name them, or when the drain was refused.
   */
  public String stillThere() {
    if (refused() || podsLeft.isEmpty()) {
      return blockers();
    }
    StringBuilder sb = new StringBuilder();
    int named = 0;
    for (Map.Entry<String, String> pod : podsLeft.entrySet()) {
      String why = pod.getValue();
      String one =
          pod.getKey()
              + " ("
              + (why.length() > MAX_REASON ? why.substring(0, MAX_REASON) + "..." : why)
              + ")";
      if (named == NAMED_PODS || (named > 0 && sb.length() + 2 + one.length() > MAX_NAMED_TEXT)) {
        break;
      }
      sb.append(named > 0 ? "; " : "").append(one);
      named++;
    }
    int more = Math.max(pending, podsLeft.size()) - named;
    if (more > 0) {
      sb.append("; and ").append(more).append(" more");
    }
    return sb.toString();
  }
}
