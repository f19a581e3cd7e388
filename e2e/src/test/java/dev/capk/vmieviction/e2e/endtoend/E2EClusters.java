package dev.capk.vmieviction.e2e.endtoend;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.ScenarioClusterExtension;

/**
 * The clusters the end-to-end suites share: one infra, two tenant (guest) clusters, from the
 * backend the run selected (-Dcapk.e2e.backend: local by default, k3s, or kubeconfig; see the
 * README).
 */
final class E2EClusters {
  private E2EClusters() {}

  static ScenarioClusterExtension infra() {
    return ScenarioClusterExtension.shared("e2e-infra", LocalCluster.Builder::withAll);
  }

  static ScenarioClusterExtension guestA() {
    return ScenarioClusterExtension.shared("e2e-guest-a", LocalCluster.Builder::withAll);
  }

  static ScenarioClusterExtension guestB() {
    return ScenarioClusterExtension.shared("e2e-guest-b", LocalCluster.Builder::withAll);
  }
}
