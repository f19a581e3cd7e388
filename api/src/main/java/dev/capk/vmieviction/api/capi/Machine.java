package dev.capk.vmieviction.api.capi;

import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.ApiObject;

/**
 * A partial Cluster API {@code Machine}: its annotations (see {@link
 * ClusterApi#EXCLUDE_NODE_DRAINING_ANNOTATION}) and how long its node may take to drain, in either
 * API version: v1beta1's {@code spec.nodeDrainTimeout} (a Go duration) or v1beta2's {@code
 * spec.deletion.nodeDrainTimeoutSeconds}. Read-only for us.
 */
public class Machine extends ApiObject<Machine> {

  public Machine() {
    super(null, ClusterApi.MACHINE_KIND);
  }

  @SerializedName("spec")
  private Spec spec;

  public Spec getSpec() {
    return spec;
  }

  public void setSpec(Spec spec) {
    this.spec = spec;
  }

  /** {@code spec}: only the drain timeout, as either version spells it. */
  public static class Spec {
    /** v1beta1: a Go duration such as "5m"; "0s" or absent means no limit. */
    @SerializedName("nodeDrainTimeout")
    private String nodeDrainTimeout;

    /** v1beta2. */
    @SerializedName("deletion")
    private Deletion deletion;

    public String getNodeDrainTimeout() {
      return nodeDrainTimeout;
    }

    public void setNodeDrainTimeout(String nodeDrainTimeout) {
      this.nodeDrainTimeout = nodeDrainTimeout;
    }

    public Deletion getDeletion() {
      return deletion;
    }

    public void setDeletion(Deletion deletion) {
      this.deletion = deletion;
    }
  }

  /** v1beta2's {@code spec.deletion}: only the drain timeout; 0 or absent means no limit. */
  public static class Deletion {
    @SerializedName("nodeDrainTimeoutSeconds")
    private Long nodeDrainTimeoutSeconds;

    public Long getNodeDrainTimeoutSeconds() {
      return nodeDrainTimeoutSeconds;
    }

    public void setNodeDrainTimeoutSeconds(Long nodeDrainTimeoutSeconds) {
      this.nodeDrainTimeoutSeconds = nodeDrainTimeoutSeconds;
    }
  }
}
