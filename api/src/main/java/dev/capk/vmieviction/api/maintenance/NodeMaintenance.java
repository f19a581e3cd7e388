package dev.capk.vmieviction.api.maintenance;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.Objects;

/**
 * A cluster-scoped {@code nodemaintenance.medik8s.io/v1beta1} NodeMaintenance: put a node into
 * maintenance (taint, cordon, drain) while the object exists. Never sent back with PUT: the
 * controller patches the finalizer and the status fields it changes.
 */
public class NodeMaintenance implements KubernetesObject {

  @SerializedName("apiVersion")
  private String apiVersion = NodeMaintenanceApi.API_VERSION;

  @SerializedName("kind")
  private String kind = NodeMaintenanceApi.KIND;

  @SerializedName("metadata")
  private V1ObjectMeta metadata;

  @SerializedName("spec")
  private NodeMaintenanceSpec spec;

  @SerializedName("status")
  private NodeMaintenanceStatus status;

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  @Override
  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  @Override
  public V1ObjectMeta getMetadata() {
    return metadata;
  }

  public void setMetadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
  }

  public NodeMaintenance metadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
    return this;
  }

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
    return Objects.equals(apiVersion, other.apiVersion)
        && Objects.equals(kind, other.kind)
        && Objects.equals(metadata, other.metadata)
        && Objects.equals(spec, other.spec)
        && Objects.equals(status, other.status);
  }

  @Override
  public int hashCode() {
    return Objects.hash(apiVersion, kind, metadata, spec, status);
  }

  @Override
  public String toString() {
    String name = metadata == null ? null : metadata.getName();
    return "NodeMaintenance{" + name + ", spec=" + spec + ", status=" + status + "}";
  }
}
