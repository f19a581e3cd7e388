package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import java.util.Objects;

/** The part of a VMI's spec the eviction controller reads. */
public class VirtualMachineInstanceSpec {

  /** See {@link EvictionStrategy}; unset means the cluster-wide default applies. */
  @SerializedName("evictionStrategy")
  private String evictionStrategy;

  public String getEvictionStrategy() {
    return evictionStrategy;
  }

  public void setEvictionStrategy(String evictionStrategy) {
    this.evictionStrategy = evictionStrategy;
  }

  public VirtualMachineInstanceSpec evictionStrategy(String evictionStrategy) {
    this.evictionStrategy = evictionStrategy;
    return this;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof VirtualMachineInstanceSpec other
        && Objects.equals(evictionStrategy, other.evictionStrategy);
  }

  @Override
  public int hashCode() {
    return Objects.hashCode(evictionStrategy);
  }

  @Override
  public String toString() {
    return "{evictionStrategy=" + evictionStrategy + "}";
  }
}
