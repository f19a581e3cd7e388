package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1Pod;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Runs each pod through the filter chain and groups the verdicts into a {@link DrainPlan}. Pure
 * logic.
 */
public final class DrainPlanner {
  private final List<PodFilter> filters;

  public DrainPlanner(List<PodFilter> filters) {
    this.filters = List.copyOf(filters);
  }

  public DrainPlan plan(List<V1Pod> pods) {
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
}
