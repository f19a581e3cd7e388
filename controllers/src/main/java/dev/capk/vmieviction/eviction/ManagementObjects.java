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
   * What can be read now. An object that does not exist or may not be read (404, 403) is absent
   * from the facts with its reason; that is an answer.
   *
   * @throws GuestAccessException when the VMI may not reach its Cluster (the same reasons as a
   *     guest connection: {@code MissingClusterLabel}, {@code ClusterNamespaceRefused}), or {@code
   *     InfraAPIError} when a read failed transiently: not an answer, to be retried
   */
  MachineContract.Facts read(VirtualMachineInstance vmi) throws GuestAccessException;
}
