package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.EvictionStrategy;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import java.util.List;
import java.util.Optional;

/**
 * Whether a VMI is one this controller must evacuate now, and if not, why not; and which eviction
 * strategy applies to it. Pure.
 */
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
    if (!EvictionStrategy.EXTERNAL.equals(effectiveStrategy)) {
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

  /**
   * The strategy KubeVirt applies: the VMI's own when set, else the cluster-wide default from the
   * KubeVirt CR when it could be read and is set, else the operator-given fallback.
   */
  public static String effectiveStrategy(
      String vmiStrategy, Optional<String> clusterDefault, String fallback) {
    if (!isBlank(vmiStrategy)) {
      return vmiStrategy.trim();
    }
    return clusterDefault.filter(s -> !isBlank(s)).map(String::trim).orElse(fallback);
  }

  /** True when neither the VMI nor the KubeVirt CR says, so the operator's fallback decides. */
  public static boolean isFallbackStrategy(String vmiStrategy, Optional<String> clusterDefault) {
    return isBlank(vmiStrategy) && clusterDefault.filter(s -> !isBlank(s)).isEmpty();
  }

  /**
   * The strategies KubeVirt accepts, in its API's spelling (case-sensitive, as KubeVirt compares
   * them).
   */
  public static final List<String> KNOWN_STRATEGIES =
      List.of(
          EvictionStrategy.NONE,
          EvictionStrategy.LIVE_MIGRATE,
          EvictionStrategy.LIVE_MIGRATE_IF_POSSIBLE,
          EvictionStrategy.EXTERNAL);

  private static boolean isBlank(String s) {
    return s == null || s.isBlank();
  }
}
