package dev.capk.vmieviction.api.maintenance;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.openapi.models.V1ListMeta;
import java.util.ArrayList;
import java.util.List;

/** A list of NodeMaintenances, as returned by list and used by the informer. */
public class NodeMaintenanceList implements KubernetesListObject {

  @SerializedName("apiVersion")
  private String apiVersion = NodeMaintenanceApi.API_VERSION;

  @SerializedName("kind")
  private String kind = NodeMaintenanceApi.KIND + "List";

  @SerializedName("metadata")
  private V1ListMeta metadata;

  @SerializedName("items")
  private List<NodeMaintenance> items = new ArrayList<>();

  @Override
  public V1ListMeta getMetadata() {
    return metadata;
  }

  public void setMetadata(V1ListMeta metadata) {
    this.metadata = metadata;
  }

  @Override
  public List<NodeMaintenance> getItems() {
    return items;
  }

  public void setItems(List<NodeMaintenance> items) {
    this.items = items;
  }

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
}
