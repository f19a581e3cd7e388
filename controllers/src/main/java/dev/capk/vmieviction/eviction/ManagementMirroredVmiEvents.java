package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.kube.Metadata;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClusterRef;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * External infra: the VMI's events go to the infra cluster as before ({@code onVmi}), and its
 * outcomes also to the management cluster, where the tenant's owners look: on the VMI's
 * KubevirtMachine (in the namespace of the Cluster the tenant mapping gives), and, for a refused
 * VMI (which maps to no Cluster), on the KubevirtClusters bound to the infra cluster and namespace
 * it was seen in. Each message names the infra VMI.
 */
public final class ManagementMirroredVmiEvents implements VmiEvents {

  /** The reasons repeated in the management cluster: what an evacuation came to. */
  public static final Set<String> MIRRORED =
      Set.of(
          EventReasons.DRAIN_STARTED,
          EventReasons.DRAIN_SUCCEEDED,
          EventReasons.VMI_DELETED,
          EventReasons.DEADLINE_PASSED,
          EventReasons.INFRA_CLUSTER_MISMATCH);

  private final VmiEvents onVmi;
  private final EventSeriesRecorder management;
  private final TenantMapping tenants;
  private final Supplier<List<V1ObjectReference>> boundKubevirtClusters;
  private final String infraName;

  /**
   * @param management writes Events in the management cluster; must treat {@link #MIRRORED} as
   *     outcomes
   * @param boundKubevirtClusters the KubevirtClusters bound to where the VMIs are seen
   * @param infraName how messages name the infra connection (never its kubeconfig)
   */
  public ManagementMirroredVmiEvents(
      VmiEvents onVmi,
      EventSeriesRecorder management,
      TenantMapping tenants,
      Supplier<List<V1ObjectReference>> boundKubevirtClusters,
      String infraName) {
    this.onVmi = onVmi;
    this.management = management;
    this.tenants = tenants;
    this.boundKubevirtClusters = boundKubevirtClusters;
    this.infraName = infraName;
  }

  @Override
  public void record(VirtualMachineInstance vmi, boolean warning, String reason, String message) {
    onVmi.record(vmi, warning, reason, message);
    mirror(vmi, warning, reason, message);
  }

  private void mirror(VirtualMachineInstance vmi, boolean warning, String reason, String message) {
    if (!MIRRORED.contains(reason)) {
      return;
    }
    String vmiKey = vmi.getMetadata().getNamespace() + "/" + vmi.getMetadata().getName();
    String text = "Infra VMI " + vmiKey + " (" + infraName + "): " + message;
    if (EventReasons.INFRA_CLUSTER_MISMATCH.equals(reason)) {
      for (V1ObjectReference kvc : boundKubevirtClusters.get()) {
        management.record(kvc, vmiKey, warning, reason, text);
      }
      return;
    }
    String machine = Metadata.label(vmi, CapkLabels.KUBEVIRT_MACHINE_NAME);
    if (machine == null || machine.isBlank()) {
      return;
    }
    GuestClusterRef cluster;
    try {
      cluster = tenants.clusterOf(vmi);
    } catch (GuestAccessException e) {
      return; // not mapped: said on the VMI
    }
    V1ObjectReference kubevirtMachine =
        new V1ObjectReference()
            .apiVersion(CapkApi.GROUP + "/" + CapkApi.VERSION)
            .kind(CapkApi.KUBEVIRT_MACHINE_KIND)
            .namespace(cluster.namespace())
            .name(machine);
    management.record(kubevirtMachine, VmiEvents.evacuation(vmi), warning, reason, text);
  }
}
