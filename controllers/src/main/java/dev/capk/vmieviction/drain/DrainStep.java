package dev.capk.vmieviction.drain;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Where a node's drain stands after one step.
 *
 * @param complete every pod that had to go is gone
 * @param evicted pods evicted (or found gone) by the drain so far, over all its steps
 * @param requests eviction requests this step sent
 * @param planned the pods this step's plan had to evict (those found gone included)
 * @param pending pods still on the node that have to go (failed and terminating ones too)
 * @param terminating the pending pods being deleted
 * @param blockingBudgets for each pod a budget refused, the budgets' names
 * @param failed pods that cannot be evicted for now, with why (retried later all the same)
 * @param denied the failed pods whose eviction the API server's authorization refused
 * @param skipped pods left on the node, with why
 * @param nextTry when the earliest waiting pod is due; empty when only deletions are awaited
 * @param waiting for each pending pod, why it is still on the node, in words an admin can act on
 */
public record DrainStep(
    boolean complete,
    int evicted,
    int requests,
    List<PodRef> planned,
    List<PodRef> pending,
    List<PodRef> terminating,
    Map<PodRef, Set<String>> blockingBudgets,
    Map<PodRef, String> failed,
    Set<PodRef> denied,
    Map<PodRef, String> skipped,
    Optional<Instant> nextTry,
    Map<PodRef, String> waiting) {

  public DrainStep {
    planned = List.copyOf(planned);
    pending = List.copyOf(pending);
    terminating = List.copyOf(terminating);
    blockingBudgets = new TreeMap<>(blockingBudgets);
    failed = new TreeMap<>(failed);
    denied = new TreeSet<>(denied);
    skipped = new TreeMap<>(skipped);
    waiting = new TreeMap<>(waiting);
  }

  /** One line for logs and events. */
  public String summary() {
    StringBuilder sb = new StringBuilder();
    sb.append(evicted).append(" pod(s) evicted");
    if (!pending.isEmpty()) {
      sb.append(", ").append(pending.size()).append(" pending");
      if (!terminating.isEmpty()) {
        sb.append(" (").append(terminating.size()).append(" terminating)");
      }
    }
    if (!blockingBudgets.isEmpty()) {
      sb.append(", ").append(blockingBudgets.size()).append(" blocked by budgets");
    }
    if (!failed.isEmpty()) {
      sb.append(", ").append(failed.size()).append(" failed");
    }
    if (!skipped.isEmpty()) {
      sb.append(", ").append(skipped.size()).append(" skipped");
    }
    return sb.toString();
  }
}
