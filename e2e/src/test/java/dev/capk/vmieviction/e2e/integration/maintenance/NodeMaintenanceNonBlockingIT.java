package dev.capk.vmieviction.e2e.integration.maintenance;

import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitGone;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitPhase;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitRunning;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitSettled;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.create;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.delete;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.intField;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.namespace;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.nodeState;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.pendingPods;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.phase;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.pod;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.status;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.NodeState;
import dev.capk.vmieviction.runtime.ControllerRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A NodeMaintenance's drain never holds a worker: one worker only, and every timer of the drain
 * (the retry of a refused eviction, the fallback poll) ten minutes long, so whatever completes
 * within the test's wait was carried by the work queue and the watch on the node's pods.
 */
class NodeMaintenanceNonBlockingIT {

  @RegisterExtension
  static final LocalClusterExtension ext = LocalClusterExtension.shared("maintenance");

  static final Duration LONG = Duration.ofMinutes(10);

  static LocalCluster cluster;
  static ControllerRuntime controller;

  @BeforeAll
  static void start() throws Exception {
    cluster = ext.cluster();
    MaintenanceFixture.installCrd(cluster);
    controller =
        MaintenanceFixture.startController(
            MaintenanceFixture.controllerKubeconfig(cluster),
            MaintenanceFixture.settings(LONG, LONG, 1));
  }

  @AfterAll
  static void stop() {
    if (controller != null) {
      controller.close();
    }
  }

  @Test
  void aDrainHeldByABudgetHoldsNoWorkerAndAnotherNodesMaintenanceCompletesMeanwhile()
      throws Exception {
    String heldNode = node("nm-held");
    NodeState before = nodeState(cluster, heldNode);
    String heldNs = unique("nm-held");
    String held = unique("nm-held");
    guardedPod(heldNode, heldNs);
    // A long drain attempt: a controller that waited for the drain would hold its only worker.
    create(cluster, held, heldNode, "held by a budget", "10m");
    awaitBlocked(held, heldNs);

    String freeNode = node("nm-free");
    String freeNs = unique("nm-free");
    namespace(cluster, freeNs);
    pod(cluster, freeNs, "web-0", freeNode, "web");
    pod(cluster, freeNs, "web-1", freeNode, "web");
    awaitRunning(cluster, freeNs, 2);
    String free = unique("nm-free");
    create(cluster, free, freeNode, "free");
    awaitPhase(cluster, free, "Succeeded");
    assertEquals(List.of(), podsOn(cluster, freeNode));

    assertEquals("Running", phase(cluster, held), "the budget still refuses");
    assertEquals(List.of(heldNs + "/db-0"), podsOn(cluster, heldNode));

    // Deleting the held maintenance mid-drain stops it and restores its node.
    delete(cluster, held);
    awaitGone(cluster, held);
    assertEquals(before, awaitSettled(cluster, heldNode));
    assertEquals(List.of(heldNs + "/db-0"), podsOn(cluster, heldNode), "no eviction after");
    delete(cluster, free);
    awaitGone(cluster, free);
  }

  @Test
  void aPodLeavingTheNodeWakesTheMaintenancesNextStep() throws Exception {
    String node = node("nm-wake");
    String ns = unique("nm-wake");
    String nm = unique("nm-wake");
    guardedPod(node, ns);
    create(cluster, nm, node, "woken by the watch");
    awaitBlocked(nm, ns);
    // The refused eviction is next tried in ten minutes, the fallback poll too: only the pod's
    // deletion, seen by the watch on the node's pods, can bring the maintenance back now.
    awaitEvent(cluster, "NodeMaintenance", nm, "DrainBlocked");
    // Longer than a drain attempt (3 s) of a controller that drains in timed attempts: the pod's
    // deletion below must not fall into one that happens to be under way.
    Thread.sleep(4000);
    assertEquals("Running", phase(cluster, nm), "held by the budget");

    cluster.kubectl().runOrFail(null, "-n", ns, "delete", "pod", "db-0", "--wait=false");
    awaitPhase(cluster, nm, "Succeeded");
    Map<String, Object> st = status(cluster, nm);
    assertEquals(100, intField(st, "drainProgress"));
    assertEquals(1, intField(st, "evictionPods"));
    assertEquals(List.of(), podsOn(cluster, node));
    delete(cluster, nm);
    awaitGone(cluster, nm);
    assertFalse(awaitSettled(cluster, node).unschedulable());
  }

  // -----------------------------------------------------------------------------------------------

  static String node(String prefix) {
    String n = unique(prefix);
    cluster.kwokNodes().createNamed(n, Map.of("nm-it/ds", n));
    awaitSettled(cluster, n);
    return n;
  }

  /** Pod db-0 on the node, under a budget that never allows its disruption. */
  static void guardedPod(String node, String ns) throws Exception {
    namespace(cluster, ns);
    pod(cluster, ns, "db-0", node, "db");
    MaintenanceFixture.budgetNeverAllowingDb(cluster, ns, 1);
  }

  static void awaitBlocked(String nm, String ns) {
    Await.until(
        "NodeMaintenance " + nm + " Running with db-0 held by the budget",
        WAIT,
        () -> {
          Map<String, Object> st = status(cluster, nm);
          return "Running".equals(st.get("phase"))
              && List.of("db-0").equals(pendingPods(st))
              && st.get("lastError") instanceof String e
              && e.contains("PodDisruptionBudget " + ns + "/db");
        });
  }
}
