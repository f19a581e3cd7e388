package dev.capk.vmieviction.api.maintenance;

import com.google.gson.annotations.SerializedName;
import java.util.Objects;

/** What to maintain: the node, and why. */
public class NodeMaintenanceSpec {

  /** The node to put into maintenance. Required. */
  @SerializedName("nodeName")
  private String nodeName;

  /** Free text for humans, shown by {@code kubectl get nm}. */
  @SerializedName("reason")
  private String reason;

  /**
   * Bound of the eviction requests of one drain step (a Go duration such as {@code 30s}; a step
   * never waits for pods to go); newer Node Maintenance Operator releases accept it. Empty or zero:
   * the controller's default.
   */
  @SerializedName("evictionTimeout")
  private String evictionTimeout;

  public String getNodeName() {
    return nodeName;
  }

  public void setNodeName(String nodeName) {
    this.nodeName = nodeName;
  }

  public NodeMaintenanceSpec nodeName(String nodeName) {
    this.nodeName = nodeName;
    return this;
  }

  public String getReason() {
    return reason;
  }

  public void setReason(String reason) {
    this.reason = reason;
  }

  public NodeMaintenanceSpec reason(String reason) {
    this.reason = reason;
    return this;
  }

  public String getEvictionTimeout() {
    return evictionTimeout;
  }

  public void setEvictionTimeout(String evictionTimeout) {
    this.evictionTimeout = evictionTimeout;
  }

  public NodeMaintenanceSpec evictionTimeout(String evictionTimeout) {
    this.evictionTimeout = evictionTimeout;
    return this;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NodeMaintenanceSpec other
        && Objects.equals(nodeName, other.nodeName)
        && Objects.equals(reason, other.reason)
        && Objects.equals(evictionTimeout, other.evictionTimeout);
  }

  @Override
  public int hashCode() {
    return Objects.hash(nodeName, reason, evictionTimeout);
  }

  @Override
  public String toString() {
    return "{nodeName="
        + nodeName
        + ", reason="
        + reason
        + ", evictionTimeout="
        + evictionTimeout
        + "}";
  }
}
