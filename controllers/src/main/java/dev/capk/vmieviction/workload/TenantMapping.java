package dev.capk.vmieviction.workload;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import java.util.Optional;

/**
 * Which tenant Cluster a VMI belongs to, and so whose kubeconfig Secret, Machines and
 * KubevirtMachines its evacuation may reach. VMIs in the controller's own cluster are mapped by
 * {@link ClusterNamespacePolicy}; VMIs seen through an external infra cluster's connection by the
 * Clusters whose KubevirtClusters lead to that infra cluster and namespace.
 */
public interface TenantMapping {

  /**
   * The Cluster of a VMI, if the VMI may reach it.
   *
   * @throws GuestAccessException with a specific reason when it may not (its message is safe to
   *     publish)
   */
  GuestClusterRef clusterOf(VirtualMachineInstance vmi) throws GuestAccessException;

  /**
   * Why the VMI is not one of ours at all, or empty when it is. A refused VMI is never drained,
   * annotated or deleted, not even at a deadline: its labels claim a tenant that the management
   * objects do not bind to where it runs. Local mode refuses none (there the deadline holds for
   * every VMI the label selector picks).
   */
  default Optional<String> refusal(VirtualMachineInstance vmi) {
    return Optional.empty();
  }
}
