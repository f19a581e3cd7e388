package dev.capk.vmieviction.workload;

/**
 * Why the guest cluster (or what leads to it) cannot be used right now. Messages are safe to log
 * and to put in Events: they never contain kubeconfig content, tokens or keys.
 */
public class GuestAccessException extends Exception {

  /** A specific cause; its name is the Kubernetes Event reason. */
  public enum Reason {
    MissingClusterLabel,
    /** The VMI names a Cluster in a namespace it may not reach (see TenantMapping.local). */
    ClusterNamespaceRefused,
    /**
     * External infra: the VMI's labels name a Cluster that no KubevirtCluster binds to the infra
     * cluster and namespace the VMI runs in.
     */
    InfraClusterMismatch,
    ClusterNotFound,
    KubeconfigSecretNotFound,
    KubeconfigSecretMissingValue,
    KubeconfigInvalid,
    InfraAPIError,
    GuestAPIForbidden,
    GuestAPIUnavailable,
    /**
     * The guest API server's certificate is not signed by the kubeconfig's CA, or does not name the
     * server: the connection is refused (never retried insecurely).
     */
    GuestAPICertificateRejected,
    /**
     * The guest API server answered a write with a refusal (an admission denial, a validation
     * error, a JSON Patch that does not apply to the node as it is): the same request will not
     * succeed, so it is backed off, not retried as a conflict.
     */
    GuestAPIRefused,
    GuestAPIError
  }

  private final Reason reason;

  public GuestAccessException(Reason reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
