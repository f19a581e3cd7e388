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

  /** {@code spec.configuration}: the cluster-wide default eviction strategy, migration limits. */
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

    /** KubeVirt's live migration limits; null when the CR does not set them. */
    @SerializedName("migrations")
    private Migrations migrations;

    public Migrations getMigrations() {
      return migrations;
    }

    public Configuration migrations(Migrations migrations) {
      this.migrations = migrations;
      return this;
    }
  }

  /** {@code spec.configuration.migrations}: only the two parallelism limits. */
  public static class Migrations {
    @SerializedName("parallelMigrationsPerCluster")
    private Integer parallelMigrationsPerCluster;

    @SerializedName("parallelOutboundMigrationsPerNode")
    private Integer parallelOutboundMigrationsPerNode;

    public Integer getParallelMigrationsPerCluster() {
      return parallelMigrationsPerCluster;
    }

    public Migrations parallelMigrationsPerCluster(Integer n) {
      this.parallelMigrationsPerCluster = n;
      return this;
    }

    public Integer getParallelOutboundMigrationsPerNode() {
      return parallelOutboundMigrationsPerNode;
    }

    public Migrations parallelOutboundMigrationsPerNode(Integer n) {
      this.parallelOutboundMigrationsPerNode = n;
      return this;
    }
  }
}
