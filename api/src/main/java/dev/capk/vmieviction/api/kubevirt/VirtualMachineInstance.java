package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.ApiObject;
import java.util.Objects;

/**
 * A partial {@code kubevirt.io/v1} VirtualMachineInstance: only what the eviction controller reads.
 * Never send it back with PUT: fields not modelled here would be erased.
 */
public class VirtualMachineInstance extends ApiObject<VirtualMachineInstance> {

  public VirtualMachineInstance() {
    super(KubeVirtApi.API_VERSION, KubeVirtApi.VMI_KIND);
  }

  @SerializedName("spec")
  private VirtualMachineInstanceSpec spec;

  @SerializedName("status")
  private VirtualMachineInstanceStatus status;

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
    String ns = getMetadata() == null ? null : getMetadata().getNamespace();
    String name = getMetadata() == null ? null : getMetadata().getName();
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
