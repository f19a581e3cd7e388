package dev.capk.vmieviction.api;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;

/**
 * What every one of our partial models has: apiVersion, kind and metadata, as the client's generic
 * API and informers need them. Each model adds only the spec and status fields it reads.
 *
 * @param <T> the model itself, so that the fluent setters return it
 */
public abstract class ApiObject<T extends ApiObject<T>> implements KubernetesObject {

  @SerializedName("apiVersion")
  private String apiVersion;

  @SerializedName("kind")
  private String kind;

  @SerializedName("metadata")
  private V1ObjectMeta metadata;

  /** The defaults a new object of the model carries (Gson overwrites them with what it reads). */
  protected ApiObject(String apiVersion, String kind) {
    this.apiVersion = apiVersion;
    this.kind = kind;
  }

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  public T apiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
    return self();
  }

  @Override
  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  public T kind(String kind) {
    this.kind = kind;
    return self();
  }

  @Override
  public V1ObjectMeta getMetadata() {
    return metadata;
  }

  public void setMetadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
  }

  public T metadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
    return self();
  }

  @SuppressWarnings("unchecked")
  private T self() {
    return (T) this;
  }
}
