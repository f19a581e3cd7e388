package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import java.util.Objects;

/** The part of a VMI's status the eviction controller reads. */
public class VirtualMachineInstanceStatus {

  /** Phase value of a VMI whose guest is running. */
  public static final String PHASE_RUNNING = "Running";

  /**
   * Set by KubeVirt when it refused the eviction of the VMI's pod: the name of the <em>infra</em>
   * node being drained. Never a guest node name.
   */
  @SerializedName("evacuationNodeName")
  private String evacuationNodeName;

  /** The infra node the VMI runs on. */
  @SerializedName("nodeName")
  private String nodeName;

  @SerializedName("phase")
  private String phase;

  public String getEvacuationNodeName() {
    return evacuationNodeName;
  }

  public void setEvacuationNodeName(String evacuationNodeName) {
    this.evacuationNodeName = evacuationNodeName;
  }

  public VirtualMachineInstanceStatus evacuationNodeName(String evacuationNodeName) {
    this.evacuationNodeName = evacuationNodeName;
    return this;
  }

  public String getNodeName() {
    return nodeName;
  }

  public void setNodeName(String nodeName) {
    this.nodeName = nodeName;
  }

  public VirtualMachineInstanceStatus nodeName(String nodeName) {
    this.nodeName = nodeName;
    return this;
  }

  public String getPhase() {
    return phase;
  }

  public void setPhase(String phase) {
    this.phase = phase;
  }

  public VirtualMachineInstanceStatus phase(String phase) {
    this.phase = phase;
    return this;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof VirtualMachineInstanceStatus other
        && Objects.equals(evacuationNodeName, other.evacuationNodeName)
        && Objects.equals(nodeName, other.nodeName)
        && Objects.equals(phase, other.phase);
  }

  @Override
  public int hashCode() {
    return Objects.hash(evacuationNodeName, nodeName, phase);
  }

  @Override
  public String toString() {
    return "{evacuationNodeName="
        + evacuationNodeName
        + ", nodeName="
        + nodeName
        + ", phase="
        + phase
        + "}";
  }
}
