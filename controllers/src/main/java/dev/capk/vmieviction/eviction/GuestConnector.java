package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.workload.GuestAccessException;

/** Finds a VMI's guest cluster (Cluster, kubeconfig Secret) and gives access to it. */
public interface GuestConnector {
  Guest connect(VirtualMachineInstance vmi) throws GuestAccessException;
}
