package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1Pod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The verdicts for a node's pods: what to evict, what to leave, what refuses the drain ({@code
 * refusals}: kubectl's reason, "cannot delete Pods with local storage (...)", to the pods it
 * refuses), and kubectl's warnings (message to the pods it concerns). Pods are in namespace/name
 * order, refusal and warning groups in filter order.
 */
public record DrainPlan(
    List<V1Pod> toEvict,
    List<SkippedPod> skipped,
    Map<String, List<PodRef>> refusals,
    Map<String, List<PodRef>> warnings) {

  public DrainPlan {
    toEvict = List.copyOf(toEvict);
    skipped = List.copyOf(skipped);
    refusals = freeze(refusals);
    warnings = freeze(warnings);
  }

  /**
   * Runs each pod through {@code filters} in order and groups the verdicts. Pure logic.
   *
   * @throws IllegalStateException if a filter gives no verdict
   */
  public static DrainPlan of(List<PodFilter> filters, List<V1Pod> pods) {
    List<V1Pod> sorted = new ArrayList<>(pods);
    sorted.sort(Comparator.comparing(PodRef::of));

    List<V1Pod> toEvict = new ArrayList<>();
    List<SkippedPod> skipped = new ArrayList<>();
    // Keyed by the index of the deciding filter, so groups come out in filter order.
    Map<Integer, Map<String, List<PodRef>>> refusals = new TreeMap<>();
    Map<Integer, Map<String, List<PodRef>>> warnings = new TreeMap<>();

    for (V1Pod pod : sorted) {
      PodRef ref = PodRef.of(pod);
      PodVerdict verdict = PodVerdict.delete();
      int decidedBy = -1;
      for (int i = 0; i < filters.size(); i++) {
        verdict = filters.get(i).verdict(pod);
        if (verdict == null) {
          throw new IllegalStateException(
              "pod filter #" + i + " returned no verdict for pod " + ref);
        }
        decidedBy = i;
        if (!verdict.deletes()) {
          break;
        }
      }
      // As kubectl: a pod's status is the last verdict given, so an earlier filter's warning
      // ("deleting Pods with local storage") gives way to a later one's, or to none.
      if (verdict.warning()) {
        group(warnings, decidedBy, verdict.reason(), ref);
      }
      switch (verdict.action()) {
        case DELETE -> toEvict.add(pod);
        case SKIP ->
            skipped.add(
                new SkippedPod(
                    ref, verdict.reason().isEmpty() ? "skipped by a filter" : verdict.reason()));
        case REFUSE ->
            group(refusals, decidedBy, DrainRefusedException.kubectlReason(verdict.reason()), ref);
      }
    }
    return new DrainPlan(toEvict, skipped, flatten(refusals), flatten(warnings));
  }

  private static void group(
      Map<Integer, Map<String, List<PodRef>>> groups, int filter, String reason, PodRef pod) {
    groups
        .computeIfAbsent(filter, k -> new LinkedHashMap<>())
        .computeIfAbsent(reason, k -> new ArrayList<>())
        .add(pod);
  }

  private static Map<String, List<PodRef>> flatten(Map<Integer, Map<String, List<PodRef>>> groups) {
    Map<String, List<PodRef>> out = new LinkedHashMap<>();
    groups
        .values()
        .forEach(
            byReason ->
                byReason.forEach(
                    (reason, pods) ->
                        out.computeIfAbsent(reason, k -> new ArrayList<>()).addAll(pods)));
    return out;
  }

  public List<PodRef> toEvictRefs() {
    return toEvict.stream().map(PodRef::of).toList();
  }

  public boolean refused() {
    return !refusals.isEmpty();
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
