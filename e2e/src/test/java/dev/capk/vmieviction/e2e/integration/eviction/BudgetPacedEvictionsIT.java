package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  @Test
  void aBudgetsWakeSendsOnlyTheEvictionsItAllowsNotOneForEveryPodLeft() throws Exception {
    String ns = world.tenant("budget-paced");

    // P pods on the VMI's guest node; their replacements go to the spare node.
    String vm = unique("vm-paced");
    String gns = unique("paced");
    BudgetStatusWakeIT.workloadOnOneNode(
        world.guest(), gns, "paced", P, P - 1, vm, unique("vm-paced-spare"));
    String uid = vmi(world.infra(), ns, vm, "tenant", "External");

    world.startController(ns, "--drain-retry-interval", "60s");

    double before = BudgetStatusWakeIT.evictionRequests(world.guest());
    evacuate(world.infra(), ns, vm, "infra-node-1");
    awaitDeleted(world.infra(), ns, vm, uid);
    assertTrue(podsOn(world.guest(), gns, vm).isEmpty(), "the guest node was drained");

    double evictions = BudgetStatusWakeIT.evictionRequests(world.guest()) - before;
    System.out.println("BudgetPacedEvictionsIT: eviction requests " + evictions);
    // P accepted; the first step, before the budget was known, refused P-1; after that a wake
    // sends what the budget allows (a status seen late may cost a refusal or two more).
    assertTrue(
        evictions <= 2 * P + 2,
        "eviction requests for " + P + " pods under maxUnavailable 1: " + evictions);
  }
}
