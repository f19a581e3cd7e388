package dev.capk.vmieviction.api.capi;

/** Group and resource names of the Cluster API objects we read. */
public final class ClusterApi {
  private ClusterApi() {}

  public static final String GROUP = "cluster.x-k8s.io";

  /** The version read by default; CAPI serves v1beta1 and v1beta2 with conversion. */
  public static final String DEFAULT_VERSION = "v1beta1";

  public static final String CLUSTER_PLURAL = "clusters";
  public static final String CLUSTER_KIND = "Cluster";

  /** The Secret holding a cluster's admin kubeconfig is named {@code <cluster>-kubeconfig}. */
  public static final String KUBECONFIG_SECRET_SUFFIX = "-kubeconfig";

  /** The key of that Secret's data holding the kubeconfig. */
  public static final String KUBECONFIG_SECRET_KEY = "value";

  public static String kubeconfigSecretName(String clusterName) {
    return clusterName + KUBECONFIG_SECRET_SUFFIX;
  }
}
