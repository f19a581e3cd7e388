package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.annotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.event;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.get;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.StallingProxy;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A drain that cannot finish never holds a worker: reconciles return while budgets still refuse, a
 * pod leaving the guest node wakes its VMI at once, and a tenant whose API server stalls holds at
 * most its share of the workers. Each test runs its own controller with two workers, so that the
 * old behaviour (a reconcile held through a whole drain pass) would visibly keep others waiting.
 */
class NonBlockingDrainIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  @Test
  void reconcilesReturnWhileBudgetsStillRefuseSoAFreeVmiIsNotKeptWaiting() throws Exception {
    String ns = world.tenant("ev-hol");
    // A drain pass could hold a worker for 5 minutes: two blocked VMIs would hold both workers.
    world.startController(ns, "--workers", "2", "--drain-attempt-timeout", "5m");
    List<String> blocked = List.of(unique("vm-blocked"), unique("vm-blocked"));
    List<String> guestNamespaces = new ArrayList<>();
    for (String vm : blocked) {
      world.guest().kwokNodes().createNamed(vm, Map.of());
      String guestNs = unique("never");
      guestNamespaces.add(guestNs);
      // minAvailable = replicas: the budget never allows a disruption.
      workload(world.guest(), guestNs, "db", 1, 1, List.of(vm));
      vmi(world.infra(), ns, vm, "tenant", "External");
      evacuate(world.infra(), ns, vm, "infra-node-1");
    }
    for (String vm : blocked) {
      Await.until(vm + " cordoned", WAIT, () -> unschedulable(node(world.guest(), vm)));
    }

    String free = unique("vm-free");
    world.guest().kwokNodes().createNamed(free, Map.of());
    String freeUid = vmi(world.infra(), ns, free, "tenant", "External");
    evacuate(world.infra(), ns, free, "infra-node-1");
    awaitDeleted(world.infra(), ns, free, freeUid);

    // The blocked drains are still blocked: their VMIs wait, their pods stay, the budgets refuse.
    for (int i = 0; i < blocked.size(); i++) {
      String vm = blocked.get(i);
      assertTrue(get(world.infra(), ns, vm).isPresent(), vm + " still there");
      assertEquals(
          1, podsOn(world.guest(), guestNamespaces.get(i), vm).size(), "pod still on " + vm);
      var pdb =
          new PolicyV1Api(world.guest().client())
              .readNamespacedPodDisruptionBudget("db-pdb", guestNamespaces.get(i))
              .execute();
      assertEquals(0, pdb.getStatus().getDisruptionsAllowed(), "budget still refuses");
    }
  }

  @Test
  void aPodLeavingTheGuestNodeWakesItsVmiAtOnceNotAtTheNextLook() throws Exception {
    String ns = world.tenant("ev-wake");
    // Between two looks at the drain: 5 minutes, longer than this test waits.
    world.startController(
        ns, "--workers", "2", "--drain-retry-interval", "5m", "--drain-attempt-timeout", "2s");
    String vm = unique("vm-wake");
    // No kubelet confirms the deletion: the evicted pod stays terminating until the test says.
    EvictionFixture.readyNodeWithoutKubelet(world.guest(), vm);
    String guestNs = unique("held");
    EvictionFixture.namespaceWithServiceAccount(world.guest(), guestNs);
    world.guestApply(
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: held, namespace: %s}
        spec:
          nodeName: %s
          containers: [{name: main, image: held:fake}]
        """
            .formatted(guestNs, vm));
    String uid = vmi(world.infra(), ns, vm, "tenant", "External");
    evacuate(world.infra(), ns, vm, "infra-node-1");
    Await.until(
        "pod evicted and terminating",
        WAIT,
        () ->
            podsOn(world.guest(), guestNs, vm).stream()
                .anyMatch(p -> p.getMetadata().getDeletionTimestamp() != null));
    // Past the first retry of the eviction (5 s): from here on only the watch, or the next look in
    // 5 minutes, can bring the VMI's next step.
    Thread.sleep(6_000);
    assertTrue(get(world.infra(), ns, vm).isPresent(), "the VMI waits for its pod");

    world
        .guest()
        .kubectl()
        .runOrFail(null, "-n", guestNs, "delete", "pod", "held", "--grace-period=0", "--force");

    awaitDeleted(world.infra(), ns, vm, uid);
  }

  @Test
  void aTenantWhoseApiServerStallsHoldsOnlyItsShareOfTheWorkers() throws Exception {
    try (StallingProxy proxy = StallingProxy.start()) {
      LocalCluster guest = world.guest();
      String stalledNs = unique("ev-stall");
      world.tenant(
          stalledNs, "tenant", guest.adminKubeconfigYaml().replace(guest.serverUrl(), proxy.url()));
      String healthyNs = world.tenant("ev-ok");
      world.startController(
          stalledNs, "--namespace", healthyNs, "--workers", "2", "--guest-max-in-flight", "1");
      List<String> stalled = Stream.generate(() -> unique("vm-stalled")).limit(3).toList();
      for (String vm : stalled) {
        vmi(world.infra(), stalledNs, vm, "tenant", "External");
        evacuate(world.infra(), stalledNs, vm, "infra-node-2");
      }
      // Both workers have had the stalled tenant's VMIs: their drain starts are recorded, and
      // their guest requests hang.
      Await.until(
          "stalled tenant's evacuations started",
          WAIT,
          () ->
              stalled.stream()
                      .filter(
                          vm -> {
                            try {
                              return get(world.infra(), stalledNs, vm)
                                  .flatMap(v -> annotation(v, EvictionAnnotations.DRAIN_START_TIME))
                                  .isPresent();
                            } catch (Exception e) {
                              return false;
                            }
                          })
                      .count()
                  >= 2);

      String vm = unique("vm-healthy");
      world.guest().kwokNodes().createNamed(vm, Map.of());
      String uid = vmi(world.infra(), healthyNs, vm, "tenant", "External");
      evacuate(world.infra(), healthyNs, vm, "infra-node-2");
      awaitDeleted(world.infra(), healthyNs, vm, uid);

      // Deleted before any stalled request had even timed out: it never waited for them.
      for (String s : stalled) {
        assertTrue(
            event(world.infra(), stalledNs, s, "GuestAPIUnavailable").isEmpty(),
            "no stalled request of " + s + " had ended when the healthy tenant's VMI went");
      }
      assertTrue(proxy.acceptedConnections() > 0, "the stalled tenant was reached");
    }
  }
}
