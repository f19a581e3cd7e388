package dev.capk.vmieviction.e2e.endtoend;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;

/** The clusters the end-to-end suites share: one infra, two tenant (guest) clusters. */
final class E2EClusters {
    private E2EClusters() {}

    static LocalClusterExtension infra() {
        return LocalClusterExtension.shared("e2e-infra", LocalCluster.Builder::withAll);
    }

    static LocalClusterExtension guestA() {
        return LocalClusterExtension.shared("e2e-guest-a", LocalCluster.Builder::withAll);
    }

    static LocalClusterExtension guestB() {
        return LocalClusterExtension.shared("e2e-guest-b", LocalCluster.Builder::withAll);
    }
}
