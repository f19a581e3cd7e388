package dev.capk.vmieviction.infra;

/** Reasons of the Events on KubevirtClusters (management cluster) in external infra mode. */
public final class InfraEventReasons {
  private InfraEventReasons() {}

  /**
   * The Secret named by {@code spec.infraClusterSecretRef} is missing, has no {@code kubeconfig}
   * key, or holds a kubeconfig the policy refuses; the message says which, never its content.
   */
  public static final String INFRA_SECRET_INVALID = "InfraSecretInvalid";

  /** The infra cluster's API server does not answer the VMI watch (list/watch failing). */
  public static final String INFRA_CLUSTER_UNREACHABLE = "InfraClusterUnreachable";

  /** The KubevirtCluster has no owner reference to a Cluster API Cluster yet: not used. */
  public static final String CLUSTER_OWNER_MISSING = "ClusterOwnerMissing";
}
