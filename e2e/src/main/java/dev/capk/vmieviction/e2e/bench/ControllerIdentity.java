package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Gives the controller under measurement the client identity whose requests the API servers' audit
 * logs keep ({@link AuditLog#USER}): a kubeconfig of its own for the infra cluster, and each
 * tenant's kubeconfig Secret rewritten to the same user in that guest cluster.
 */
final class ControllerIdentity {
  private ControllerIdentity() {}

  /** Writes the infra kubeconfig of the controller's identity to {@code file}. */
  static Path infraKubeconfig(LocalCluster infra, Path file) {
    try {
      Files.writeString(file, infra.kubeconfigFor(AuditLog.USER, "system:masters"));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The tenant's kubeconfig Secret, for the controller's own identity in that guest cluster. */
  static void useInGuest(TenantCluster t, LocalCluster guest) {
    t.useKubeconfig(guest.kubeconfigFor(AuditLog.USER, "system:masters"));
  }
}
