package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.Objects;

/**
 * A partial {@code kubevirt.io/v1} VirtualMachineInstance: only what the eviction controller reads.
 * Never send it back with PUT: fields not modelled here would be erased.
 */
public class VirtualMachineInstance implements KubernetesObject {

  @SerializedName("apiVersion")
  private String apiVersion = KubeVirtApi.API_VERSION;

  @SerializedName("kind")
  private String kind = KubeVirtApi.VMI_KIND;

  @SerializedName("metadata")
  private V1ObjectMeta metadata;

  @SerializedName("spec")
  private VirtualMachineInstanceSpec spec;

  @SerializedName("status")
  private VirtualMachineInstanceStatus status;

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  public VirtualMachineInstance apiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
    return this;
  }

  @Override
  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  public VirtualMachineInstance kind(String kind) {
    this.kind = kind;
    return this;
  }

  @Override
  public V1ObjectMeta getMetadata() {
    return metadata;
  }

  public void setMetadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
  }

  public VirtualMachineInstance metadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
    return this;
  }

  public VirtualMachineInstanceSpec getSpec() {
    return spec;
  }

  public void setSpec(VirtualMachineInstanceSpec spec) {
    this.spec = spec;
  }

  public VirtualMachineInstance spec(VirtualMachineInstanceSpec spec) {
    this.spec = spec;
    return this;
  }

  public VirtualMachineInstanceStatus getStatus() {
    return status;
  }

  public void setStatus(VirtualMachineInstanceStatus status) {
    this.status = status;
  }

  public VirtualMachineInstance status(VirtualMachineInstanceStatus status) {
    this.status = status;
    return this;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) return true;
    if (!(o instanceof VirtualMachineInstance other)) return false;
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
    String ns = metadata == null ? null : metadata.getNamespace();
    String name = metadata == null ? null : metadata.getName();
    return "VirtualMachineInstance{"
        + ns
        + "/"
        + name
        + ", spec="
        + spec
        + ", status="
        + status
        + "}";
  }
}
