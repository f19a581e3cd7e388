package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;

/** Whether a VMI is one this controller must evacuate now, and if not, why not. Pure. */
public enum Eligibility {
  /** External strategy, evacuation requested, not being deleted: drain and delete. */
  EVACUATE,
  /** Already being deleted: nothing left for us to do. */
  DELETING,
  /** KubeVirt handles this VMI itself (migration, shutdown): never ours. */
  NOT_EXTERNAL,
  /** Nobody asked for this VMI to leave its infra node. */
  NOT_EVACUATING;

  public static Eligibility of(VirtualMachineInstance vmi, String effectiveStrategy) {
    if (vmi.getMetadata() != null && vmi.getMetadata().getDeletionTimestamp() != null) {
      return DELETING;
    }
    if (!EvictionStrategies.isExternal(effectiveStrategy)) {
      return NOT_EXTERNAL;
    }
    String target = evacuationNodeName(vmi);
    if (target == null || target.isBlank()) {
      return NOT_EVACUATING;
    }
    return EVACUATE;
  }

  /**
   * KubeVirt asked for this VMI to leave its infra node ({@code status.evacuationNodeName} set).
   */
  static boolean evacuationRequested(VirtualMachineInstance vmi) {
    String target = evacuationNodeName(vmi);
    return target != null && !target.isBlank();
  }

  static String evacuationNodeName(VirtualMachineInstance vmi) {
    return vmi.getStatus() == null ? null : vmi.getStatus().getEvacuationNodeName();
  }
}
