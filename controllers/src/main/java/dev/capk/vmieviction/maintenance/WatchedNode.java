package dev.capk.vmieviction.maintenance;

import com.google.gson.JsonObject;
import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.Objects;

/**
 * A Node as the node informer keeps it: metadata and spec only. Reading the spec as raw JSON means
 * no field a newer API server adds can fail the watch, and the cache holds no node status (images,
 * conditions), which is most of a Node's size. Decisions read the node live, never this.
 */
public class WatchedNode implements KubernetesObject {
  @SerializedName("apiVersion")
  private String apiVersion = "v1";

  @SerializedName("kind")
  private String kind = "Node";

  @SerializedName("metadata")
  private V1ObjectMeta metadata;

  @SerializedName("spec")
  private JsonObject spec;

  @Override
  public V1ObjectMeta getMetadata() {
    return metadata;
  }

  public void setMetadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
  }

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  @Override
  public String getKind() {
    return kind;
  }

  public JsonObject getSpec() {
    return spec;
  }

  public void setSpec(JsonObject spec) {
    this.spec = spec;
  }

  /**
   * Whether a change from {@code old} to this matters to maintenance: spec (cordon, taints) or our
   * mark.
   */
  boolean maintenanceRelevantChange(WatchedNode old) {
    if (old == null) {
      return true;
    }
    return !Objects.equals(spec, old.spec) || !Objects.equals(mark(this), mark(old));
  }

  private static String mark(WatchedNode n) {
    if (n.metadata == null || n.metadata.getAnnotations() == null) {
      return null;
    }
    return n.metadata
        .getAnnotations()
        .get(dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.NODE_STATE_ANNOTATION);
  }
}
