package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Why a pod a drain has to remove is still on the node, in words an admin can act on: which
 * finalizers a terminating pod waits behind, which budget refused its eviction, what the API server
 * answered. Pure.
 */
final class PodWaits {
  private PodWaits() {}

  /** More pods were due than one step sends: this one's turn has not come. */
  static final String NOT_SENT = "eviction not sent yet";

  /**
   * A pod being deleted: its finalizers hold it (no controller removed them yet), or else its
   * kubelet has not confirmed the deletion.
   */
  static String terminating(V1Pod pod) {
    V1ObjectMeta m = pod.getMetadata();
    List<String> finalizers =
        m == null || m.getFinalizers() == null ? List.of() : m.getFinalizers();
    if (!finalizers.isEmpty()) {
      return "terminating behind finalizer"
          + (finalizers.size() == 1 ? " " : "s ")
          + String.join(", ", finalizers);
    }
    Long grace = m == null ? null : m.getDeletionGracePeriodSeconds();
    return grace == null
        ? "terminating, deletion not yet confirmed by its kubelet"
        : "terminating (grace period " + grace + "s), deletion not yet confirmed by its kubelet";
  }

  /** A pod this drain tried: what its last eviction came to. */
  static String of(PodRef pod, DrainMemory.PodState s) {
    return switch (s.waiting) {
      case ACCEPTED -> "evicted, its deletion not seen yet";
      case BLOCKED ->
          s.budgets.isEmpty()
              ? "eviction refused by a PodDisruptionBudget"
              : "eviction refused by PodDisruptionBudget"
                  + (s.budgets.size() == 1 ? " " : "s ")
                  // A budget lives in its pod's namespace: named as kubectl users know it.
                  + s.budgets.stream()
                      .map(b -> b.contains("/") ? b : pod.namespace() + "/" + b)
                      .sorted()
                      .collect(Collectors.joining(", "));
      case THROTTLED -> "eviction throttled by the API server (429 with Retry-After), retrying";
      case NAMESPACE_TERMINATING -> "eviction refused: its namespace is being deleted";
      case TRANSIENT -> "eviction failed, retrying" + (s.failure == null ? "" : ": " + s.failure);
      case FAILED ->
          // A denial's text says what was denied ("create pods/eviction denied: ...").
          s.denied ? s.failure : "eviction failed: " + s.failure;
    };
  }
}
