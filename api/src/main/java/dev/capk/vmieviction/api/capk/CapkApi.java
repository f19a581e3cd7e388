package dev.capk.vmieviction.api.capk;

/** Group, version and resource names of the CAPK objects we read. */
public final class CapkApi {
  private CapkApi() {}

  public static final String GROUP = "infrastructure.cluster.x-k8s.io";
  public static final String VERSION = "v1alpha1";
  public static final String KUBEVIRT_MACHINE_PLURAL = "kubevirtmachines";
  public static final String KUBEVIRT_MACHINE_KIND = "KubevirtMachine";
  public static final String KUBEVIRT_CLUSTER_PLURAL = "kubevirtclusters";
  public static final String KUBEVIRT_CLUSTER_KIND = "KubevirtCluster";

  /**
   * The keys of the Secret named by {@code KubevirtCluster.spec.infraClusterSecretRef}, as CAPK
   * reads it: the infra cluster's kubeconfig, and optionally the infra namespace of the tenant's
   * VMs (else the KubevirtCluster's namespace).
   */
  public static final String INFRA_SECRET_KUBECONFIG_KEY = "kubeconfig";

  public static final String INFRA_SECRET_NAMESPACE_KEY = "namespace";
}
