package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/** Kubernetes Events on VMIs. Messages must never contain secrets. */
public interface VmiEvents {

  /** What an evacuation came to: never capped, never delayed. */
  Set<String> OUTCOMES =
      Set.of(
          EventReasons.DRAIN_SUCCEEDED,
          EventReasons.VMI_DELETED,
          EventReasons.DEADLINE_PASSED,
          EventReasons.UNCORDONED);

  /** The reasons repeated in the management cluster with external infra ({@link #mirrored}). */
  Set<String> MIRRORED =
      Set.of(
          EventReasons.DRAIN_STARTED,
          EventReasons.DRAIN_SUCCEEDED,
          EventReasons.VMI_DELETED,
          EventReasons.DEADLINE_PASSED,
          EventReasons.INFRA_CLUSTER_MISMATCH);

  /** One event: a Warning, else Normal. */
  void record(VirtualMachineInstance vmi, boolean warning, String reason, String message);

  /**
   * As series: one Event per VMI, evacuation and reason, updated on repeats, capped per evacuation
   * but for the {@link #OUTCOMES} (which {@code recorder} must treat as its outcome reasons).
   */
  static VmiEvents series(EventSeriesRecorder recorder) {
    return (vmi, warning, reason, message) -> {
      V1ObjectMeta meta = vmi.getMetadata();
      V1ObjectReference ref =
          new V1ObjectReference()
              .apiVersion(vmi.getApiVersion() == null ? "kubevirt.io/v1" : vmi.getApiVersion())
              .kind(vmi.getKind() == null ? "VirtualMachineInstance" : vmi.getKind())
              .namespace(meta.getNamespace())
              .name(meta.getName())
              .uid(meta.getUid())
              .resourceVersion(meta.getResourceVersion());
      recorder.record(ref, evacuation(vmi), warning, reason, message);
    };
  }

  /**
   * External infra: the VMI's events go to the infra cluster ({@code onVmi}), and the {@link
   * #MIRRORED} ones also to the management cluster, where the tenant's owners look: on the VMI's
   * KubevirtMachine (in the namespace of the Cluster the tenant mapping gives), and, for a refused
   * VMI (which maps to no Cluster), on the KubevirtClusters bound to where it was seen. Each
   * message names the infra VMI.
   *
   * @param management writes Events in the management cluster; must treat {@link #MIRRORED} as
   *     outcomes
   * @param infraName how messages name the infra connection (never its kubeconfig)
   */
  static VmiEvents mirrored(
      VmiEvents onVmi,
      EventSeriesRecorder management,
      TenantMapping tenants,
      Supplier<List<V1ObjectReference>> boundKubevirtClusters,
      String infraName) {
    return (vmi, warning, reason, message) -> {
      onVmi.record(vmi, warning, reason, message);
      if (!MIRRORED.contains(reason)) {
        return;
      }
      String vmiKey = vmi.getMetadata().getNamespace() + "/" + vmi.getMetadata().getName();
      String text = "Infra VMI " + vmiKey + " (" + infraName + "): " + message;
      if (EventReasons.INFRA_CLUSTER_MISMATCH.equals(reason)) {
        boundKubevirtClusters
            .get()
            .forEach(k -> management.record(k, vmiKey, warning, reason, text));
        return;
      }
      String machine = LenientJson.label(vmi, CapkLabels.KUBEVIRT_MACHINE_NAME);
      if (machine == null || machine.isBlank()) {
        return;
      }
      try {
        V1ObjectReference kubevirtMachine =
            new V1ObjectReference()
                .apiVersion(CapkApi.GROUP + "/" + CapkApi.VERSION)
                .kind(CapkApi.KUBEVIRT_MACHINE_KIND)
                .namespace(tenants.clusterOf(vmi).namespace())
                .name(machine);
        management.record(kubevirtMachine, evacuation(vmi), warning, reason, text);
      } catch (GuestAccessException e) {
        // Not mapped to a Cluster: said on the VMI.
      }
    };
  }

  /** An evacuation is known by its start: a later one of the same VMI starts new series. */
  static String evacuation(VirtualMachineInstance vmi) {
    String start = LenientJson.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME);
    return start == null ? "" : start;
  }
}
