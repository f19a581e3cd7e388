package dev.capk.vmieviction.e2e.integration.maintenance;

import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitGone;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitPhase;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitSettled;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.create;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.delete;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.nodeState;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.status;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.NodeState;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * NodeMaintenance wired into the manager: off by default, on with --enable-node-maintenance and its
 * taint flags.
 */
class NodeMaintenanceInManagerIT {

  @RegisterExtension
  static final LocalClusterExtension ext = LocalClusterExtension.shared("maintenance");

  static LocalCluster cluster;

  @BeforeAll
  static void setUp() {
    cluster = ext.cluster();
    Crds.installTestCrds(cluster); // the VMI informers of the manager need KubeVirt's CRDs
    MaintenanceFixture.installCrd(cluster);
  }

  static Manager manager(String... extra) throws Exception {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "--kubeconfig",
                cluster.kubeconfig().toString(),
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "0"));
    args.addAll(List.of(extra));
    Manager m = Main.start(args.toArray(String[]::new));
    Await.until("manager ready", WAIT, m::ready);
    return m;
  }

  @Test
  void withTheFlagTheManagerServesNodeMaintenanceWithTheConfiguredTaints() throws Exception {
    String node = unique("nm-mgr");
    cluster.kwokNodes().createNamed(node, Map.of());
    NodeState before = awaitSettled(cluster, node);
    try (Manager m =
        manager(
            "--enable-node-maintenance",
            "--node-maintenance-drain-taint",
            "example.com/maintenance=yes:NoSchedule",
            "--node-maintenance-kubevirt-drain-taint")) {
      String nm = unique("nm-mgr");
      create(cluster, nm, node, "through the manager");
      awaitPhase(cluster, nm, "Succeeded");
      NodeState during = nodeState(cluster, node);
      assertTrue(during.unschedulable());
      assertTrue(
          during
              .taints()
              .containsAll(
                  List.of(
                      "node.kubernetes.io/unschedulable:NoSchedule",
                      "example.com/maintenance=yes:NoSchedule",
                      "kubevirt.io/drain:NoSchedule")),
          during.taints().toString());
      delete(cluster, nm);
      awaitGone(cluster, nm);
      assertEquals(before, awaitSettled(cluster, node));
    }
  }

  @Test
  void aStandbyIsReadyButServesNoNodeMaintenanceUntilItHoldsTheLease() throws Exception {
    String node = unique("nm-standby");
    cluster.kwokNodes().createNamed(node, Map.of());
    NodeState before = awaitSettled(cluster, node);
    String lease = unique("nm-standby");
    // Another replica holds the lease: this manager, started now, is the standby.
    cluster
        .kubectl()
        .apply(
            """
        apiVersion: coordination.k8s.io/v1
        kind: Lease
        metadata: {name: %s, namespace: default}
        spec: {holderIdentity: another-replica, leaseDurationSeconds: 60}
        """
                .formatted(lease));
    try (Manager m =
        manager(
            "--enable-node-maintenance",
            "--leader-elect",
            "--leader-election-namespace=default",
            "--leader-election-id=" + lease,
            "--leader-election-lease-duration=60s",
            "--leader-election-retry-period=1s")) {
      String nm = unique("nm-standby");
      create(cluster, nm, node, "served by the leader only");
      Thread.sleep(3000);
      assertEquals(Map.of(), status(cluster, nm), "the standby reconciled a NodeMaintenance");
      assertEquals(before, nodeState(cluster, node));

      cluster.kubectl().runOrFail(null, "-n", "default", "delete", "lease", lease);
      awaitPhase(cluster, nm, "Succeeded");
      delete(cluster, nm);
      awaitGone(cluster, nm);
      assertEquals(before, awaitSettled(cluster, node));
    }
  }

  @Test
  void withoutTheFlagNodeMaintenancesAreLeftAlone() throws Exception {
    String node = unique("nm-off");
    cluster.kwokNodes().createNamed(node, Map.of());
    NodeState before = awaitSettled(cluster, node);
    try (Manager m = manager()) {
      String nm = unique("nm-off");
      create(cluster, nm, node, "nobody serves this");
      Thread.sleep(3000);
      assertEquals(Map.of(), status(cluster, nm));
      assertEquals(before, nodeState(cluster, node));
      delete(cluster, nm);
      awaitGone(cluster, nm);
    }
  }

  @Test
  void aMalformedDrainTaintIsRefusedBeforeStarting() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                Main.start(
                    "--kubeconfig",
                    cluster.kubeconfig().toString(),
                    "--enable-node-maintenance",
                    "--node-maintenance-drain-taint",
                    "medik8s.io/drain"));
    assertTrue(
        e.getMessage()
            .contains("--node-maintenance-drain-taint: a taint must be key[=value]:Effect"),
        e.getMessage());
  }
}
