package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Under a PodDisruptionBudget that allows one disruption at a time, each time the budget's status
 * wakes a guest node's drain it sends as many evictions as the budget allows, not one for every pod
 * still on the node: once the first refusals named the budget, a pod is refused at most once more
 * before its turn. With {@code --drain-retry-interval 60s} no retry timer comes due during the
 * drain, so every eviction after the first step is one a budget wake sent.
 */
class BudgetPacedEvictionsIT {

  /** Pods on the drained guest node, one Deployment, budget minAvailable P-1. */
  static final int P = 10;

  @RegisterExtension
  static final LocalClusterExtension infraExt =
      LocalClusterExtension.shared("infra", LocalCluster.Builder::withAll);

  @RegisterExtension
  static final LocalClusterExtension guestExt =
      LocalClusterExtension.shared("guest-a", LocalCluster.Builder::withAll);

  static LocalCluster infra;
  static LocalCluster guest;
  static Path dir;
  Manager manager;

  @BeforeAll
  static void clusters() {
    infra = infraExt.cluster();
    guest = guestExt.cluster();
    Crds.installTestCrds(infra);
    dir = EvictionFixture.tempDir("vmi-eviction-budget-paced-it");
  }

  @AfterEach
  void stopController() {
    if (manager != null) {
      manager.close();
    }
  }

  @Test
  void aBudgetsWakeSendsOnlyTheEvictionsItAllowsNotOneForEveryPodLeft() throws Exception {
    Path kubeconfig = EvictionFixture.controllerKubeconfig(infra, dir);
    String ns = unique("budget-paced");
    EvictionFixture.namespace(infra, ns);
    EvictionFixture.cluster(infra, ns, "tenant");
    EvictionFixture.kubeconfigSecret(infra, ns, "tenant", guest.adminKubeconfigYaml());

    // P pods on the VMI's guest node; their replacements go to the spare node.
    String vm = unique("vm-paced");
    String spare = unique("vm-paced-spare");
    guest.kwokNodes().createNamed(vm, Map.of());
    guest.kwokNodes().createNamed(spare, Map.of());
    EvictionFixture.cordon(guest, spare, true);
    String gns = unique("paced");
    workload(guest, gns, "paced", P, P - 1, List.of(vm, spare));
    EvictionFixture.cordon(guest, spare, false);
    assertEquals(P, podsOn(guest, gns, vm).size(), "all pods run on the VMI's guest node");
    String uid = vmi(infra, ns, vm, "tenant", "External");

    manager =
        Main.start(
            "--kubeconfig",
            kubeconfig.toString(),
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--namespace",
            ns,
            "--drain-retry-interval",
            "60s");
    Await.until("controller ready", WAIT, manager::ready);

    double before = BudgetStatusWakeIT.evictionRequests(guest);
    evacuate(infra, ns, vm, "infra-node-1");
    awaitDeleted(infra, ns, vm, uid);
    assertTrue(podsOn(guest, gns, vm).isEmpty(), "the guest node was drained");

    double evictions = BudgetStatusWakeIT.evictionRequests(guest) - before;
    System.out.println("BudgetPacedEvictionsIT: eviction requests " + evictions);
    // P accepted; the first step, before the budget was known, refused P-1; after that a wake
    // sends what the budget allows (a status seen late may cost a refusal or two more).
    assertTrue(
        evictions <= 2 * P + 2,
        "eviction requests for " + P + " pods under maxUnavailable 1: " + evictions);
  }
}
