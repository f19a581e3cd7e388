package dev.capk.vmieviction.api.maintenance;

import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.ApiObject;
import java.util.Objects;

/**
 * A cluster-scoped {@code nodemaintenance.medik8s.io/v1beta1} NodeMaintenance: put a node into
 * maintenance (taint, cordon, drain) while the object exists. Never sent back with PUT: the
 * controller patches the finalizer and the status fields it changes.
 */
public class NodeMaintenance extends ApiObject<NodeMaintenance> {

  public NodeMaintenance() {
    super(NodeMaintenanceApi.API_VERSION, NodeMaintenanceApi.KIND);
  }

  @SerializedName("spec")
  private NodeMaintenanceSpec spec;

  @SerializedName("status")
  private NodeMaintenanceStatus status;

  public NodeMaintenanceSpec getSpec() {
    return spec;
  }

  public void setSpec(NodeMaintenanceSpec spec) {
    this.spec = spec;
  }

  public NodeMaintenance spec(NodeMaintenanceSpec spec) {
    this.spec = spec;
    return this;
  }

  public NodeMaintenanceStatus getStatus() {
    return status;
  }

  public void setStatus(NodeMaintenanceStatus status) {
    this.status = status;
  }

  public NodeMaintenance status(NodeMaintenanceStatus status) {
    this.status = status;
    return this;
  }

  /** spec.nodeName, or null. */
  public String nodeName() {
    return spec == null ? null : spec.getNodeName();
  }

  /** status.phase, or null before the controller first wrote a status. */
  public String phase() {
    return status == null ? null : status.getPhase();
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) return true;
    if (!(o instanceof NodeMaintenance other)) return false;
    return Objects.equals(getApiVersion(), other.getApiVersion())
        && Objects.equals(getKind(), other.getKind())
        && Objects.equals(getMetadata(), other.getMetadata())
        && Objects.equals(spec, other.spec)
        && Objects.equals(status, other.status);
  }

  @Override
  public int hashCode() {
    return Objects.hash(getApiVersion(), getKind(), getMetadata(), spec, status);
  }

  @Override
  public String toString() {
    String name = getMetadata() == null ? null : getMetadata().getName();
    return "NodeMaintenance{" + name + ", spec=" + spec + ", status=" + status + "}";
  }
}
