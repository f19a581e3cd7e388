package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.drain.DrainResult;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SkippedPod;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The progress of one maintenance across drain passes, in the Node Maintenance Operator's terms:
 * {@code evictionPods} and {@code totalpods} are counted once, when maintenance first plans the
 * drain; {@code pendingPods} are the pods still to evict; {@code drainProgress} is the share of the
 * former that are gone. Fed by the drain's progress callbacks (serialized by the engine), read by
 * the status writer from another thread.
 */
public final class DrainProgress {

  /** What the status shows at one moment. */
  public record Snapshot(
      int evictionPods, int totalPods, List<String> pendingPods, int percent, String lastError) {}

  private int evictionPods;
  private int totalPods;
  private final Set<PodRef> pending = new TreeSet<>();
  private String lastError;

  /**
   * @param evictionPods from the status, 0 when not counted yet
   * @param totalPods from the status, 0 when not counted yet
   */
  public DrainProgress(int evictionPods, int totalPods) {
    this.evictionPods = evictionPods;
    this.totalPods = totalPods;
  }

  /** The pass's plan: these pods are to go. The first plan of a maintenance sets the counts. */
  public synchronized void planned(Collection<PodRef> toEvict, Collection<SkippedPod> skipped) {
    pending.clear();
    pending.addAll(toEvict);
    if (evictionPods == 0 && totalPods == 0) {
      evictionPods = toEvict.size();
      totalPods = toEvict.size() + skipped.size();
    }
  }

  public synchronized void gone(PodRef pod) {
    pending.remove(pod);
  }

  public synchronized void blocked(PodRef pod, Set<String> budgets) {
    lastError = blockedMessage(pod, budgets);
  }

  public synchronized void failed(PodRef pod, String reason) {
    lastError = "cannot evict pod " + pod + ": " + reason;
  }

  /** The pass's outcome replaces what the callbacks tracked: it is the final word. */
  public synchronized void finished(DrainResult result) {
    pending.clear();
    pending.addAll(result.pending());
    pending.addAll(result.failed().keySet());
    lastError = result.isComplete() ? null : incompleteMessage(result);
  }

  public synchronized Snapshot snapshot() {
    List<String> names = pending.stream().map(PodRef::name).toList();
    return new Snapshot(
        evictionPods, totalPods, names, percent(evictionPods, pending.size()), lastError);
  }

  /**
   * Share of the pods to evict that are gone, 0..100. New pods may arrive on the node (a pod that
   * tolerates the taints), so more may be pending than were counted at the start.
   */
  public static int percent(int evictionPods, int pending) {
    if (pending == 0) {
      return 100;
    }
    if (evictionPods <= 0) {
      return 0;
    }
    int p = (evictionPods - pending) * 100 / evictionPods;
    return Math.max(0, Math.min(99, p));
  }

  /** A budget refused an eviction: the pod and the budget by name, as a user looks them up. */
  static String blockedMessage(PodRef pod, Set<String> budgets) {
    return "cannot evict pod " + pod + ": blocked by " + budgetNames(pod, budgets);
  }

  private static String budgetNames(PodRef pod, Set<String> budgets) {
    if (budgets == null || budgets.isEmpty()) {
      return "a PodDisruptionBudget (or an eviction webhook)";
    }
    return (budgets.size() == 1 ? "PodDisruptionBudget " : "PodDisruptionBudgets ")
        + budgets.stream()
            .sorted()
            .map(b -> pod.namespace() + "/" + b)
            .collect(Collectors.joining(", "));
  }

  /**
   * Why a pass ended with pods left, one line: the pods and what holds each (a budget by name, a
   * failure, a slow termination), the timeout or lost connection that ended the pass.
   */
  static String incompleteMessage(DrainResult r) {
    List<String> parts = new ArrayList<>();
    for (PodRef p : r.pending()) {
      Set<String> budgets = r.blockingBudgets().get(p);
      if (budgets != null) {
        parts.add(p + " blocked by " + budgetNames(p, budgets));
      } else if (r.pendingTerminating().contains(p)) {
        parts.add(p + " still terminating");
      } else {
        parts.add(p + " not evicted yet");
      }
    }
    for (Map.Entry<PodRef, String> f : r.failed().entrySet()) {
      parts.add(f.getKey() + " cannot be evicted: " + f.getValue());
    }
    int left = r.pending().size() + r.failed().size();
    StringBuilder s = new StringBuilder("not all pods evicted: ").append(left).append(" left");
    if (!parts.isEmpty()) {
      s.append(" (").append(String.join("; ", parts)).append(")");
    }
    r.interruption().ifPresent(i -> s.append("; drain attempt stopped: ").append(i));
    if (r.timedOut()) {
      s.append("; retrying");
    }
    return s.toString();
  }
}
