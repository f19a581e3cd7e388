package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.MachineContractCheck.MachineContract;
import dev.capk.vmieviction.workload.GuestAccessException;

/**
 * The Cluster API objects behind a VMI, as far as {@link MachineContract} needs them: its Cluster,
 * its KubevirtMachine and the Machine that owns it.
 */
public interface ManagementObjects {

  /**
   * What can be read now: an object that does not exist or may not be read (404, 403) is absent,
   * its reason in the facts. That is an answer; a transient failure ({@code InfraAPIError}) or a
   * VMI that may not reach its Cluster ({@code MissingClusterLabel}, {@code
   * ClusterNamespaceRefused}) is thrown, to be retried.
   */
  MachineContract.Facts read(VirtualMachineInstance vmi) throws GuestAccessException;
}
