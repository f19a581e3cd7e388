package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.kube.Metadata;

/** Kubernetes Events on VMIs. Messages must never contain secrets. */
public interface VmiEvents {
  /** One event: a Warning, else Normal. */
  void record(VirtualMachineInstance vmi, boolean warning, String reason, String message);

  default void normal(VirtualMachineInstance vmi, String reason, String message) {
    record(vmi, false, reason, message);
  }

  default void warning(VirtualMachineInstance vmi, String reason, String message) {
    record(vmi, true, reason, message);
  }

  /**
   * An evacuation is known by its recorded start: a later evacuation of the same VMI starts new
   * series.
   */
  static String evacuation(VirtualMachineInstance vmi) {
    String start = Metadata.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME);
    return start == null ? "" : start;
  }
}
