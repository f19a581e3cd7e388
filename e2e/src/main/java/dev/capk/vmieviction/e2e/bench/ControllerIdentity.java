package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

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
  static void useInGuest(LocalCluster infra, TenantCluster t, LocalCluster guest) {
    String kubeconfig =
        Base64.getEncoder()
            .encodeToString(
                guest
                    .kubeconfigFor(AuditLog.USER, "system:masters")
                    .getBytes(StandardCharsets.UTF_8));
    infra
        .kubectl()
        .apply(
            """
            apiVersion: v1
            kind: Secret
            metadata:
              name: %1$s-kubeconfig
              namespace: %2$s
              labels: {cluster.x-k8s.io/cluster-name: %1$s}
            type: cluster.x-k8s.io/secret
            data:
              value: %3$s
            """
                .formatted(t.name(), t.namespace(), kubeconfig));
  }
}
