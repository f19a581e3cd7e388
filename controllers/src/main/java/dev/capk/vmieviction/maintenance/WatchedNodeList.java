package dev.capk.vmieviction.maintenance;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.openapi.models.V1ListMeta;
import java.util.ArrayList;
import java.util.List;

/** A list of {@link WatchedNode}s, for the informer's list calls. */
public class WatchedNodeList implements KubernetesListObject {
  @SerializedName("apiVersion")
  private String apiVersion = "v1";

  @SerializedName("kind")
  private String kind = "NodeList";

  @SerializedName("metadata")
  private V1ListMeta metadata;

  @SerializedName("items")
  private List<WatchedNode> items = new ArrayList<>();

  @Override
  public V1ListMeta getMetadata() {
    return metadata;
  }

  @Override
  public List<WatchedNode> getItems() {
    return items;
  }

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  @Override
  public String getKind() {
    return kind;
  }
}
