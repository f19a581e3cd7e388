package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * kubectl drain's pod filters, in kubectl's order: skip pods deleted long ago, DaemonSet pods,
 * mirror pods, pods with emptyDir data, pods without a controller. The messages are kubectl's, so
 * operators recognise them.
 */
public final class PodFilters {
  public static final String DAEMONSET_FATAL =
      "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)";
  public static final String DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods";
  public static final String LOCAL_STORAGE_FATAL =
      "Pods with local storage (use --delete-emptydir-data to override)";
  public static final String LOCAL_STORAGE_WARNING = "deleting Pods with local storage";
  public static final String UNMANAGED_FATAL =
      "cannot delete Pods that declare no controller (use --force to override)";
  public static final String UNMANAGED_WARNING = "deleting Pods that declare no controller";
  public static final String MIRROR_POD =
      "mirror pod (the kubelet's static pod; cannot be deleted through the API)";

  public static final String MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";

  private final DrainOptions options;
  private final DaemonSetLookup daemonSets;
  private final Clock clock;

  public PodFilters(DrainOptions options, DaemonSetLookup daemonSets, Clock clock) {
    this.options = options;
    this.daemonSets = daemonSets;
    this.clock = clock;
  }

  public List<PodFilter> inOrder() {
    return List.of(
        this::skipDeleted,
        this::daemonSet,
        this::mirrorPod,
        this::localStorage,
        this::unreplicated);
  }

  /** A pod deleted longer ago than the skip-wait timeout is stuck: not waited for. */
  public PodVerdict skipDeleted(V1Pod pod) {
    if (deletedLongerAgoThan(pod, options.skipWaitForDeleteTimeout(), clock)) {
      return PodVerdict.skip(
          "deletion timestamp older than "
              + options.skipWaitForDeleteTimeout().toSeconds()
              + " seconds");
    }
    return PodVerdict.delete();
  }

  /**
   * The DaemonSet controller ignores unschedulable nodes and would recreate the pod at once, so its
   * pods are never deleted; an orphan (its DaemonSet is gone) may be, with --force.
   */
  public PodVerdict daemonSet(V1Pod pod) {
    V1OwnerReference ref = controllerOf(pod);
    if (ref == null || !"DaemonSet".equals(ref.getKind())) {
      return PodVerdict.delete();
    }
    if (isFinished(pod)) {
      return PodVerdict.delete();
    }
    Optional<ApiException> missing = daemonSets.find(namespaceOf(pod), ref.getName());
    if (missing.isPresent() && missing.get().getCode() == 404) {
      // kubectl's message, from the API server's NotFound error.
      String gone = "daemonsets.apps \"" + ref.getName() + "\" not found";
      return options.force() ? PodVerdict.deleteWithWarning(gone) : PodVerdict.refuse(gone);
    } else if (missing.isPresent()) {
      return PodVerdict.refuse(
          "cannot look up daemonset "
              + namespaceOf(pod)
              + "/"
              + ref.getName()
              + ": "
              + RawApi.describe(missing.get()));
    }
    if (!options.ignoreAllDaemonSets()) {
      return PodVerdict.refuse(DAEMONSET_FATAL);
    }
    return PodVerdict.skipWithWarning(DAEMONSET_WARNING);
  }

  /** The kubelet owns a static pod: its API copy cannot be deleted. */
  public PodVerdict mirrorPod(V1Pod pod) {
    Map<String, String> annotations =
        pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
    if (annotations != null && annotations.containsKey(MIRROR_POD_ANNOTATION)) {
      return PodVerdict.skip(MIRROR_POD);
    }
    return PodVerdict.delete();
  }

  /** emptyDir data dies with the pod: only a flag allows that. */
  public PodVerdict localStorage(V1Pod pod) {
    if (!hasEmptyDir(pod) || isFinished(pod)) {
      return PodVerdict.delete();
    }
    if (!options.deleteEmptyDirData()) {
      return PodVerdict.refuse(LOCAL_STORAGE_FATAL);
    }
    return PodVerdict.deleteWithWarning(LOCAL_STORAGE_WARNING);
  }

  /** Nothing recreates a pod without a controller: only --force deletes it. */
  public PodVerdict unreplicated(V1Pod pod) {
    if (isFinished(pod) || controllerOf(pod) != null) {
      return PodVerdict.delete();
    }
    if (options.force()) {
      return PodVerdict.deleteWithWarning(UNMANAGED_WARNING);
    }
    return PodVerdict.refuse(UNMANAGED_FATAL);
  }

  static boolean deletedLongerAgoThan(V1Pod pod, Duration limit, Clock clock) {
    if (limit.isZero() || pod.getMetadata() == null) {
      return false;
    }
    OffsetDateTime deletion = pod.getMetadata().getDeletionTimestamp();
    if (deletion == null) {
      return false;
    }
    // Whole seconds, as kubectl compares them.
    long elapsedSeconds = Duration.between(deletion.toInstant(), clock.instant()).toSeconds();
    return elapsedSeconds > limit.toSeconds();
  }

  static boolean terminating(V1Pod pod) {
    return pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null;
  }

  static boolean isFinished(V1Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  static boolean hasEmptyDir(V1Pod pod) {
    return pod.getSpec() != null
        && pod.getSpec().getVolumes() != null
        && pod.getSpec().getVolumes().stream().anyMatch(v -> v.getEmptyDir() != null);
  }

  /** The owner reference marked controller=true, as metav1.GetControllerOf finds it. */
  static V1OwnerReference controllerOf(V1Pod pod) {
    V1ObjectMeta m = pod.getMetadata();
    return m == null || m.getOwnerReferences() == null
        ? null
        : m.getOwnerReferences().stream()
            .filter(r -> Boolean.TRUE.equals(r.getController()))
            .findFirst()
            .orElse(null);
  }

  private static String namespaceOf(V1Pod pod) {
    return pod.getMetadata() == null || pod.getMetadata().getNamespace() == null
        ? ""
        : pod.getMetadata().getNamespace();
  }

  /**
   * The verdicts for a node's pods: what to evict, what to leave, what refuses the drain (kubectl's
   * reason to its pods), and kubectl's warnings (message to its pods). Pods in namespace/name
   * order, groups in filter order. Read only.
   */
  public record DrainPlan(
      List<V1Pod> toEvict,
      Map<PodRef, String> skipped,
      Map<String, List<PodRef>> refusals,
      Map<String, List<PodRef>> warnings) {

    public static DrainPlan of(List<PodFilter> filters, List<V1Pod> pods) {
      List<V1Pod> sorted = new ArrayList<>(pods);
      sorted.sort(Comparator.comparing(PodRef::of));

      List<V1Pod> toEvict = new ArrayList<>();
      Map<PodRef, String> skipped = new LinkedHashMap<>();
      List<Decided> refusals = new ArrayList<>();
      List<Decided> warnings = new ArrayList<>();

      for (V1Pod pod : sorted) {
        PodRef ref = PodRef.of(pod);
        PodVerdict verdict = PodVerdict.delete();
        int decidedBy = -1;
        for (int i = 0; i < filters.size(); i++) {
          verdict = filters.get(i).verdict(pod);
          decidedBy = i;
          if (!verdict.deletes()) {
            break;
          }
        }
        // As kubectl: a pod's status is the last verdict given, so an earlier filter's warning
        // ("deleting Pods with local storage") gives way to a later one's, or to none.
        if (verdict.warning()) {
          warnings.add(new Decided(decidedBy, verdict.reason(), ref));
        }
        switch (verdict.action()) {
          case DELETE -> toEvict.add(pod);
          case SKIP ->
              skipped.put(
                  ref, verdict.reason().isEmpty() ? "skipped by a filter" : verdict.reason());
          case REFUSE ->
              refusals.add(
                  new Decided(
                      decidedBy, DrainRefusedException.kubectlReason(verdict.reason()), ref));
        }
      }
      return new DrainPlan(toEvict, skipped, grouped(refusals), grouped(warnings));
    }

    private record Decided(int filter, String reason, PodRef pod) {}

    /** Pods by reason: reasons in the order of their filters, then of their first pod. */
    private static Map<String, List<PodRef>> grouped(List<Decided> decided) {
      Map<String, List<PodRef>> out = new LinkedHashMap<>();
      decided.stream()
          .sorted(Comparator.comparingInt(Decided::filter))
          .forEach(d -> out.computeIfAbsent(d.reason(), k -> new ArrayList<>()).add(d.pod()));
      return out;
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
  }

  /**
   * What one {@link PodFilter} decides about one pod. The first verdict that is not {@link
   * Action#DELETE} ends the chain (as in kubectl); a DELETE verdict may carry a warning.
   */
  public record PodVerdict(Action action, String reason, boolean warning) {
    public enum Action {
      DELETE,
      SKIP,
      /** Nothing is evicted while this pod is there. */
      REFUSE
    }

    private static final PodVerdict DELETE_PLAIN = new PodVerdict(Action.DELETE, "", false);

    public PodVerdict {
      Objects.requireNonNull(action, "action");
      reason = reason == null ? "" : reason;
      if (action == Action.REFUSE && reason.isBlank()) {
        throw new IllegalArgumentException("a refusal needs a reason");
      }
    }

    public static PodVerdict delete() {
      return DELETE_PLAIN;
    }

    public static PodVerdict deleteWithWarning(String warning) {
      return new PodVerdict(Action.DELETE, warning, true);
    }

    public static PodVerdict skip(String reason) {
      return new PodVerdict(Action.SKIP, reason, false);
    }

    public static PodVerdict skipWithWarning(String warning) {
      return new PodVerdict(Action.SKIP, warning, true);
    }

    public static PodVerdict refuse(String reason) {
      return new PodVerdict(Action.REFUSE, reason, false);
    }

    public boolean deletes() {
      return action == Action.DELETE;
    }
  }

  @FunctionalInterface
  public interface PodFilter {
    PodVerdict verdict(V1Pod pod);
  }

  /** Whether a pod's DaemonSet exists: empty if so, else the 404 or why the lookup failed. */
  @FunctionalInterface
  public interface DaemonSetLookup {
    Optional<ApiException> find(String namespace, String name);
  }

  /** DaemonSets looked up through the API, once per namespace/name (many pods share one). */
  static DaemonSetLookup daemonSets(RawApi api) {
    AppsV1Api apps = new AppsV1Api(api.client());
    Map<String, Optional<ApiException>> cache = new HashMap<>();
    return (namespace, name) -> {
      synchronized (cache) {
        return cache.computeIfAbsent(
            namespace + "/" + name,
            k -> {
              try {
                RawApi.Answer a =
                    api.execute(apps.readNamespacedDaemonSet(name, namespace).buildCall(null));
                return a.ok() ? Optional.empty() : Optional.of(a.toException());
              } catch (ApiException e) {
                return Optional.of(e);
              }
            });
      }
    };
  }
}
