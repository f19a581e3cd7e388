package dev.capk.vmieviction.api.capi;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;

/**
 * A partial Cluster API {@code Cluster}: we only need to know it exists (and its phase, for
 * messages). Read-only for us.
 */
public class Cluster implements KubernetesObject {

  @SerializedName("apiVersion")
  private String apiVersion;

  @SerializedName("kind")
  private String kind = ClusterApi.CLUSTER_KIND;

  @SerializedName("metadata")
  private V1ObjectMeta metadata;

  @SerializedName("status")
  private Status status;

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

  public Cluster metadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
    return this;
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
}
