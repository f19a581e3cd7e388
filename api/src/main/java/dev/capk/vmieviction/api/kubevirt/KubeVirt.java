package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;

/**
 * A partial {@code kubevirt.io/v1} KubeVirt custom resource: only the cluster-wide default eviction
 * strategy. Read-only for us.
 */
public class KubeVirt implements KubernetesObject {

  @SerializedName("apiVersion")
  private String apiVersion = KubeVirtApi.API_VERSION;

  @SerializedName("kind")
  private String kind = KubeVirtApi.KUBEVIRT_KIND;

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

  public KubeVirt metadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
    return this;
  }

  public Spec getSpec() {
    return spec;
  }

  public void setSpec(Spec spec) {
    this.spec = spec;
  }

  public KubeVirt spec(Spec spec) {
    this.spec = spec;
    return this;
  }

  /** {@code spec}: only {@code configuration}. */
  public static class Spec {
    @SerializedName("configuration")
    private Configuration configuration;

    public Configuration getConfiguration() {
      return configuration;
    }

    public void setConfiguration(Configuration configuration) {
      this.configuration = configuration;
    }

    public Spec configuration(Configuration configuration) {
      this.configuration = configuration;
      return this;
    }
  }

  /** {@code spec.configuration}: only the cluster-wide default eviction strategy. */
  public static class Configuration {
    /** See {@link EvictionStrategy}; applies to VMIs whose own strategy is unset. */
    @SerializedName("evictionStrategy")
    private String evictionStrategy;

    public String getEvictionStrategy() {
      return evictionStrategy;
    }

    public void setEvictionStrategy(String evictionStrategy) {
      this.evictionStrategy = evictionStrategy;
    }

    public Configuration evictionStrategy(String evictionStrategy) {
      this.evictionStrategy = evictionStrategy;
      return this;
    }
  }
}
