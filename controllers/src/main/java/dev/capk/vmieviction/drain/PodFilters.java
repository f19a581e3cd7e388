package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Volume;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * kubectl drain's pod filters, in kubectl's order: skip pods deleted long ago, DaemonSet pods,
 * mirror pods, pods with emptyDir data, pods without a controller; then the caller's filters. The
 * messages are kubectl's, so operators recognise them.
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

  /** The annotation the kubelet puts on the API copy of a static pod. */
  public static final String MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";

  private final DrainOptions options;
  private final DaemonSetLookup daemonSets;
  private final Clock clock;

  public PodFilters(DrainOptions options, DaemonSetLookup daemonSets, Clock clock) {
    this.options = options;
    this.daemonSets = daemonSets;
    this.clock = clock;
  }

  /** The built-in filters in kubectl's order, then {@link DrainOptions#filters()}. */
  public List<PodFilter> inOrder() {
    List<PodFilter> all =
        new ArrayList<>(
            List.of(
                this::skipDeleted,
                this::daemonSet,
                this::mirrorPod,
                this::localStorage,
                this::unreplicated));
    all.addAll(options.filters());
    return all;
  }

  /**
   * Pods whose deletion began longer ago than the skip-wait timeout are stuck; waiting for them is
   * pointless.
   */
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
    DaemonSetLookup.Answer answer = daemonSets.find(namespaceOf(pod), ref.getName());
    switch (answer.presence()) {
      case NOT_FOUND:
        return options.force()
            ? PodVerdict.deleteWithWarning(answer.message())
            : PodVerdict.refuse(answer.message());
      case UNKNOWN:
        return PodVerdict.refuse(answer.message());
      default:
        break;
    }
    if (!options.ignoreAllDaemonSets()) {
      return PodVerdict.refuse(DAEMONSET_FATAL);
    }
    return PodVerdict.skipWithWarning(DAEMONSET_WARNING);
  }

  /** The API copy of a static pod cannot be deleted: the kubelet owns the pod. */
  public PodVerdict mirrorPod(V1Pod pod) {
    Map<String, String> annotations =
        pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
    if (annotations != null && annotations.containsKey(MIRROR_POD_ANNOTATION)) {
      return PodVerdict.skip(MIRROR_POD);
    }
    return PodVerdict.delete();
  }

  /**
   * emptyDir data dies with the pod; only an explicit flag allows that (a finished pod has nothing
   * left to lose).
   */
  public PodVerdict localStorage(V1Pod pod) {
    if (!hasEmptyDir(pod) || isFinished(pod)) {
      return PodVerdict.delete();
    }
    if (!options.deleteEmptyDirData()) {
      return PodVerdict.refuse(LOCAL_STORAGE_FATAL);
    }
    return PodVerdict.deleteWithWarning(LOCAL_STORAGE_WARNING);
  }

  /**
   * Nothing recreates a pod without a controller: deleting it loses it, so only --force allows
   * that.
   */
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

  static boolean isFinished(V1Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  static boolean hasEmptyDir(V1Pod pod) {
    if (pod.getSpec() == null || pod.getSpec().getVolumes() == null) {
      return false;
    }
    for (V1Volume v : pod.getSpec().getVolumes()) {
      if (v.getEmptyDir() != null) {
        return true;
      }
    }
    return false;
  }

  /** The owner reference marked controller=true, as metav1.GetControllerOf finds it. */
  static V1OwnerReference controllerOf(V1Pod pod) {
    V1ObjectMeta m = pod.getMetadata();
    if (m == null || m.getOwnerReferences() == null) {
      return null;
    }
    for (V1OwnerReference r : m.getOwnerReferences()) {
      if (Boolean.TRUE.equals(r.getController())) {
        return r;
      }
    }
    return null;
  }

  private static String namespaceOf(V1Pod pod) {
    return pod.getMetadata() == null || pod.getMetadata().getNamespace() == null
        ? ""
        : pod.getMetadata().getNamespace();
  }
}
