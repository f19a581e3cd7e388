package dev.capk.vmieviction.api.capi;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;

/**
 * A partial Cluster API {@code Machine}: its annotations (see {@link
 * ClusterApi#EXCLUDE_NODE_DRAINING_ANNOTATION}) and how long its node may take to drain, in either
 * API version: v1beta1's {@code spec.nodeDrainTimeout} (a Go duration) or v1beta2's {@code
 * spec.deletion.nodeDrainTimeoutSeconds}. Read-only for us.
 */
public class Machine implements KubernetesObject {

  @SerializedName("apiVersion")
  private String apiVersion;

  @SerializedName("kind")
  private String kind = ClusterApi.MACHINE_KIND;

  @SerializedName("metadata")
  private V1ObjectMeta metadata;

  @SerializedName("spec")
  private Spec spec;

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

  public Machine metadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
    return this;
  }

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
