package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus;
import dev.capk.vmieviction.eviction.GuestNodeMatch.NodeReadiness;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.Map;

/**
 * What to do about a guest node after an evacuation. Only a node carrying our cordon mark is ever
 * uncordoned; an admin's cordon has no mark and is left alone. Pure.
 */
public enum UncordonDecision {
  /** No mark: not ours to touch. */
  NOT_OURS,
  /** Our mark, but the VMI is still evacuating or not back yet: look again later. */
  WAIT,
  /** Our mark, the VMI runs again (recreated, or its evacuation was called off), node Ready. */
  UNCORDON,
  /** Our mark, but someone already made the node schedulable: only remove the mark. */
  REMOVE_MARK;

  public static UncordonDecision of(V1Node node, VirtualMachineInstance vmi) {
    if (markOf(node) == null) {
      return NOT_OURS;
    }
    boolean unschedulable =
        node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
    if (!unschedulable) {
      return REMOVE_MARK;
    }
    if (vmi == null
        || vmi.getMetadata() == null
        || vmi.getMetadata().getDeletionTimestamp() != null) {
      return WAIT;
    }
    VirtualMachineInstanceStatus status = vmi.getStatus();
    if (status == null) {
      return WAIT;
    }
    String evacuation = status.getEvacuationNodeName();
    if (evacuation != null && !evacuation.isBlank()) {
      return WAIT;
    }
    if (!VirtualMachineInstanceStatus.PHASE_RUNNING.equals(status.getPhase())) {
      return WAIT;
    }
    return NodeReadiness.of(node) == NodeReadiness.READY ? UNCORDON : WAIT;
  }

  /** The UID of the VMI we cordoned the node for, or null when we did not cordon it. */
  public static String markOf(V1Node node) {
    if (node.getMetadata() == null) {
      return null;
    }
    Map<String, String> annotations = node.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(EvictionAnnotations.CORDONED_BY);
  }
}
