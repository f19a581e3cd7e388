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
    /** External infra: no KubevirtCluster binds the named Cluster to where the VMI runs. */
    InfraClusterMismatch,
    ClusterNotFound,
    KubeconfigSecretNotFound,
    KubeconfigSecretMissingValue,
    KubeconfigInvalid,
    InfraAPIError,
    GuestAPIForbidden,
    GuestAPIUnavailable,
    /** The server's certificate does not match the kubeconfig: refused, never retried. */
    GuestAPICertificateRejected,
    /** A write refused (admission, validation, a patch that does not apply): backed off. */
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
