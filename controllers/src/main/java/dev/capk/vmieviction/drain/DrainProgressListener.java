package dev.capk.vmieviction.drain;

import java.util.List;
import java.util.Set;

/**
 * Per-pod progress of one drain, for logs, events and metrics. Every method has an empty default.
 *
 * <p>Calls for one drain come from the thread that called {@link NodeDrainer#drain}, one at a time,
 * and stop when it returns. A listener that throws is logged and otherwise ignored: reporting must
 * never break a drain.
 *
 * <p>In a dry run, {@link #evicting} is called for each pod that would go; {@link #evicted} and
 * {@link #deleted} are not, since nothing goes.
 */
public interface DrainProgressListener {
  /** A listener that does nothing. */
  DrainProgressListener NONE = new DrainProgressListener() {};

  /** The node is unschedulable now; {@code changed} is false when it already was. */
  default void cordoned(String node, boolean changed) {}

  /**
   * The plan: pods to evict, pods left in place, and kubectl-style warnings ("ignoring
   * DaemonSet-managed Pods: ...").
   */
  default void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {}

  /**
   * The first eviction (or, with eviction disabled or unsupported, deletion) request for a pod is
   * about to be sent; or the pod is already being deleted (kubectl would send it one, accepted
   * since the pod goes anyway), and the drain waits for it.
   */
  default void evicting(PodRef pod, boolean usingEviction) {}

  /** A PodDisruptionBudget refused the eviction (HTTP 429); the drain retries until its timeout. */
  default void blocked(PodRef pod, Set<String> budgets, String message) {}

  /**
   * A request for the pod failed in a way worth retrying (terminating namespace, server error); it
   * is retried.
   */
  default void retrying(PodRef pod, String reason) {}

  /** The pod was evicted and is gone (or was replaced by a new pod of the same name). */
  default void evicted(PodRef pod) {}

  /** The pod was deleted (eviction disabled or not served) and is gone. */
  default void deleted(PodRef pod) {}

  /**
   * The pod is being deleted since longer than the skip-wait timeout: the drain stops waiting for
   * it.
   */
  default void notWaitedFor(PodRef pod, String reason) {}

  /**
   * The pod cannot be evicted (e.g. several budgets match it); the drain goes on with the others
   * and is incomplete.
   */
  default void failed(PodRef pod, String reason) {}
}
