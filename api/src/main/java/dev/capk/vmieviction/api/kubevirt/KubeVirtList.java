package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.openapi.models.V1ListMeta;
import java.util.ArrayList;
import java.util.List;

/** A list of partial {@link KubeVirt} objects. */
public class KubeVirtList implements KubernetesListObject {

  @SerializedName("apiVersion")
  private String apiVersion;

  @SerializedName("kind")
  private String kind = "KubeVirtList";

  @SerializedName("metadata")
  private V1ListMeta metadata;

  @SerializedName("items")
  private List<KubeVirt> items = new ArrayList<>();

  @Override
  public V1ListMeta getMetadata() {
    return metadata;
  }

  public void setMetadata(V1ListMeta metadata) {
    this.metadata = metadata;
  }

  @Override
  public List<KubeVirt> getItems() {
    return items;
  }

  public void setItems(List<KubeVirt> items) {
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
