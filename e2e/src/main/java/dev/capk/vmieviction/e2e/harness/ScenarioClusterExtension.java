package dev.capk.vmieviction.e2e.harness;

import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Hands a test class a shared cluster from the backend the run selected ({@link ClusterBackend}):
 * local control planes by default, k3s containers or existing clusters on request. Where the
 * selected backend cannot run (no Docker engine for k3s, no kubeconfig given), the class is skipped
 * and the reason is printed, never failed.
 */
public final class ScenarioClusterExtension extends SharedClusterExtension<KubeCluster> {
  private ScenarioClusterExtension(String role, UnaryOperator<LocalCluster.Builder> localShape) {
    super(role, localShape);
  }

  /**
   * The cluster of {@code role} (e.g. "e2e-infra"); a local one is shaped by {@code localShape}.
   */
  public static ScenarioClusterExtension shared(
      String role, UnaryOperator<LocalCluster.Builder> localShape) {
    return new ScenarioClusterExtension(role, localShape);
  }

  @Override
  KubeCluster obtain(ExtensionContext context) {
    ClusterBackend backend = ClusterBackend.selected();
    Optional<String> unavailable = backend.unavailableReason(name);
    if (unavailable.isPresent()) {
      System.out.printf("harness: skipping %s: %s%n", context.getDisplayName(), unavailable.get());
      Assumptions.abort(unavailable.get());
    }
    return SharedClusters.get(name, backend, localShape);
  }
}
