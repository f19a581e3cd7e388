package dev.capk.vmieviction.api.capi;

import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.ApiObject;

/**
 * A partial Cluster API {@code Cluster}: we need to know it exists, whether it is paused (its
 * {@code spec.paused}; the annotation {@link ClusterApi#PAUSED_ANNOTATION} is in the metadata), and
 * its phase, for messages. Read-only for us.
 */
public class Cluster extends ApiObject<Cluster> {

  public Cluster() {
    super(null, ClusterApi.CLUSTER_KIND);
  }

  @SerializedName("spec")
  private Spec spec;

  @SerializedName("status")
  private Status status;

  public Spec getSpec() {
    return spec;
  }

  public void setSpec(Spec spec) {
    this.spec = spec;
  }

  public Status getStatus() {
    return status;
  }

  public void setStatus(Status status) {
    this.status = status;
  }

  /** {@code status}: only the phase. */
  public static class Status {
    @SerializedName("phase")
    private String phase;

    public String getPhase() {
      return phase;
    }

    public void setPhase(String phase) {
      this.phase = phase;
    }
  }

  /** {@code spec}: only whether the Cluster is paused (v1beta1 and v1beta2 alike). */
  public static class Spec {
    @SerializedName("paused")
    private Boolean paused;

    public Boolean getPaused() {
      return paused;
    }

    public void setPaused(Boolean paused) {
      this.paused = paused;
    }
  }
}
