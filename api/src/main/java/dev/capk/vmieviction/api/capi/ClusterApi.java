package dev.capk.vmieviction.api.capi;

/** Group and resource names of the Cluster API objects we read. */
public final class ClusterApi {
  private ClusterApi() {}

  public static final String GROUP = "cluster.x-k8s.io";

  /**
   * The versions we read, preferred first: Cluster API serves both with conversion from v1.11 and
   * stops serving v1beta1 in v1.16; an older release serves v1beta1 alone.
   */
  public static final String V1BETA2 = "v1beta2";

  public static final String V1BETA1 = "v1beta1";

  public static final String CLUSTER_PLURAL = "clusters";
  public static final String CLUSTER_KIND = "Cluster";

  public static final String MACHINE_PLURAL = "machines";
  public static final String MACHINE_KIND = "Machine";

  /**
   * On a Cluster (or any Cluster API object): its controllers leave it alone while present. The
   * Cluster's {@code spec.paused} says the same.
   */
  public static final String PAUSED_ANNOTATION = "cluster.x-k8s.io/paused";

  /** On a Machine: Cluster API deletes it without draining its node. Presence counts, any value. */
  public static final String EXCLUDE_NODE_DRAINING_ANNOTATION =
      "machine.cluster.x-k8s.io/exclude-node-draining";

  /** The Secret holding a cluster's admin kubeconfig is named {@code <cluster>-kubeconfig}. */
  /**
   * Our annotation on a Cluster: worker VMIs evacuated at once (an integer, 0 = unlimited, or a
   * percentage of the Cluster's VMIs); overrides {@code --max-concurrent-evacuations-per-cluster}.
   */
  public static final String MAX_CONCURRENT_EVACUATIONS_ANNOTATION =
      "capk.cluster.x-k8s.io/max-concurrent-evacuations";

  /**
   * Our annotation on a Cluster: {@code never} or {@code prefer} live migration of its VMIs before
   * draining them; overrides {@code --live-migration}.
   */
  public static final String LIVE_MIGRATION_ANNOTATION = "capk.cluster.x-k8s.io/live-migration";

  public static final String KUBECONFIG_SECRET_SUFFIX = "-kubeconfig";

  /** The key of that Secret's data holding the kubeconfig. */
  public static final String KUBECONFIG_SECRET_KEY = "value";

  public static String kubeconfigSecretName(String clusterName) {
    return clusterName + KUBECONFIG_SECRET_SUFFIX;
  }
}
