package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;

/** Kubernetes Events on VMIs. Messages must never contain secrets. */
public interface VmiEvents {
  void normal(VirtualMachineInstance vmi, String reason, String message);

  void warning(VirtualMachineInstance vmi, String reason, String message);
}
