package dev.capk.vmieviction.api.capk;

import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.ApiObject;

/**
 * A partial CAPK {@code KubevirtCluster}: its metadata (the owner reference to its Cluster API
 * Cluster) and {@code spec.infraClusterSecretRef}, the Secret that leads to an external infra
 * cluster. Read-only for us.
 */
public class KubevirtCluster extends ApiObject<KubevirtCluster> {

  public KubevirtCluster() {
    super(null, CapkApi.KUBEVIRT_CLUSTER_KIND);
  }

  @SerializedName("spec")
  private Spec spec;

  public Spec getSpec() {
    return spec;
  }

  public void setSpec(Spec spec) {
    this.spec = spec;
  }

  public KubevirtCluster spec(Spec spec) {
    this.spec = spec;
    return this;
  }

  /** {@code spec}: only the reference to the external infra cluster's Secret. */
  public static class Spec {
    @SerializedName("infraClusterSecretRef")
    private SecretRef infraClusterSecretRef;

    public SecretRef getInfraClusterSecretRef() {
      return infraClusterSecretRef;
    }

    public void setInfraClusterSecretRef(SecretRef ref) {
      this.infraClusterSecretRef = ref;
    }

    public Spec infraClusterSecretRef(SecretRef ref) {
      this.infraClusterSecretRef = ref;
      return this;
    }
  }

  /**
   * {@code spec.infraClusterSecretRef}: a core ObjectReference, of which CAPK reads the name and
   * namespace (empty: the KubevirtCluster's own).
   */
  public static class SecretRef {
    @SerializedName("name")
    private String name;

    @SerializedName("namespace")
    private String namespace;

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public String getNamespace() {
      return namespace;
    }

    public void setNamespace(String namespace) {
      this.namespace = namespace;
    }

    public SecretRef name(String name) {
      this.name = name;
      return this;
    }

    public SecretRef namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }
  }
}
