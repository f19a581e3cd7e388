package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1Pod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The verdicts for a node's pods: what to evict, what to leave, what refuses the drain, and
 * kubectl's warnings. Pods are in namespace/name order, refusal and warning groups in filter order.
 */
public final class DrainPlan {
  private final List<V1Pod> toEvict;
  private final List<SkippedPod> skipped;
  private final Map<String, List<PodRef>> refusals;
  private final Map<String, List<PodRef>> warnings;

  DrainPlan(
      List<V1Pod> toEvict,
      List<SkippedPod> skipped,
      Map<String, List<PodRef>> refusals,
      Map<String, List<PodRef>> warnings) {
    this.toEvict = List.copyOf(toEvict);
    this.skipped = List.copyOf(skipped);
    this.refusals = freeze(refusals);
    this.warnings = freeze(warnings);
  }

  public List<V1Pod> toEvict() {
    return toEvict;
  }

  public List<PodRef> toEvictRefs() {
    return toEvict.stream().map(PodRef::of).toList();
  }

  public List<SkippedPod> skipped() {
    return skipped;
  }

  /**
   * kubectl-style reason ("cannot delete Pods with local storage (...)") to the pods it refuses.
   */
  public Map<String, List<PodRef>> refusals() {
    return refusals;
  }

  public boolean refused() {
    return !refusals.isEmpty();
  }

  /** Warning message to the pods it concerns. */
  public Map<String, List<PodRef>> warnings() {
    return warnings;
  }

  /** kubectl's warning lines: "ignoring DaemonSet-managed Pods: ns/a, ns/b". */
  public List<String> warningLines() {
    List<String> lines = new ArrayList<>();
    warnings.forEach((msg, pods) -> lines.add(msg + ": " + DrainRefusedException.join(pods)));
    return lines;
  }

  private static Map<String, List<PodRef>> freeze(Map<String, List<PodRef>> m) {
    Map<String, List<PodRef>> copy = new LinkedHashMap<>();
    m.forEach((k, v) -> copy.put(k, List.copyOf(v)));
    return Collections.unmodifiableMap(copy);
  }
}
