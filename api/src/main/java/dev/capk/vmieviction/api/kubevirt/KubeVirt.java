package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.ApiObject;

/**
 * A partial {@code kubevirt.io/v1} KubeVirt custom resource: only the cluster-wide default eviction
 * strategy. Read-only for us.
 */
public class KubeVirt extends ApiObject<KubeVirt> {

  public KubeVirt() {
    super(KubeVirtApi.API_VERSION, KubeVirtApi.KUBEVIRT_KIND);
  }

  @SerializedName("spec")
  private Spec spec;

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
