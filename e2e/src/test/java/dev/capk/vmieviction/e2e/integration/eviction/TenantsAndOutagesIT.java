package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.nodeAnnotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.running;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two tenants' guest clusters at once, and a guest API server that goes away in the middle of a
 * drain: the deadline still deletes the VMI.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TenantsAndOutagesIT {

  /** Guest b's API server is stopped by a test: not shared with other classes. */
  @RegisterExtension
  static final EvictionWorld world = EvictionWorld.withGuests("guest-a", "eviction-guest-b");

  /**
   * Far above a straight evacuation (a few seconds). The outage below is only complete some 12 s
   * after the drain starts (the API server's stop takes up to 10 s): the controller still meets it
   * well before the deadline.
   */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(25);

  static final String NS_A = "ev-outage-a";
  static final String NS_B = "ev-outage-b";

  static LocalCluster guestA;
  static LocalCluster guestB;

  @BeforeAll
  static void start() throws Exception {
    guestA = world.guest("guest-a");
    guestB = world.guest("eviction-guest-b");
    world.tenant(NS_A, "tenant-a", guestA);
    world.tenant(NS_B, "tenant-b", guestB);
    world.startLeaderElectedController(
        "vmi-eviction-outage-it",
        NS_A,
        flags(
            "--namespace %s --drain-timeout %ds --drain-retry-interval 1s --drain-attempt-timeout 3s"
                .formatted(NS_B, DRAIN_TIMEOUT.toSeconds())));
  }

  @Test
  @Order(1)
  void twoTenantsVmisAreEvacuatedConcurrently() throws Exception {
    record Tenant(LocalCluster guest, String ns, String cluster, String vm, String guestNs) {}
    List<Tenant> tenants =
        List.of(
            new Tenant(guestA, NS_A, "tenant-a", unique("vm-ta"), unique("app")),
            new Tenant(guestB, NS_B, "tenant-b", unique("vm-tb"), unique("app")));
    for (Tenant t : tenants) {
      String spare = "spare-" + t.vm();
      t.guest().kwokNodes().createNamed(t.vm(), Map.of());
      t.guest().kwokNodes().createNamed(spare, Map.of());
      EvictionFixture.cordon(t.guest(), spare, true);
      workload(t.guest(), t.guestNs(), "web", 2, 1, List.of(t.vm(), spare));
      EvictionFixture.cordon(t.guest(), spare, false);
    }
    List<String> uids = new java.util.ArrayList<>();
    for (Tenant t : tenants) {
      uids.add(vmi(world.infra(), t.ns(), t.vm(), t.cluster(), "External"));
    }
    for (Tenant t : tenants) {
      evacuate(world.infra(), t.ns(), t.vm(), "infra-node-3");
    }
    for (int i = 0; i < tenants.size(); i++) {
      Tenant t = tenants.get(i);
      awaitDeleted(world.infra(), t.ns(), t.vm(), uids.get(i));
      assertTrue(
          unschedulable(node(t.guest(), t.vm())), t.vm() + " cordoned in its own guest cluster");
      assertEquals(
          Optional.of(uids.get(i)),
          nodeAnnotation(node(t.guest(), t.vm()), EvictionAnnotations.CORDONED_BY));
      assertEquals(
          2,
          running(t.guest(), t.guestNs(), "web").stream()
              .filter(p -> ("spare-" + t.vm()).equals(p.getSpec().getNodeName()))
              .count());
      awaitEvent(world.infra(), t.ns(), t.vm(), "DrainSucceeded");
    }
  }

  @Test
  @Order(2)
  void guestApiServerStoppedMidDrainTheVmiIsDeletedAtTheDeadline() throws Exception {
    String vm = unique("vm-outage");
    guestB.kwokNodes().createNamed(vm, Map.of());
    String guestNs = unique("db");
    workload(guestB, guestNs, "db", 1, 1, List.of(vm));
    String uid = vmi(world.infra(), NS_B, vm, "tenant-b", "External");
    evacuate(world.infra(), NS_B, vm, "infra-node-3");
    awaitEvent(world.infra(), NS_B, vm, "DrainBlocked");

    // The guest API server goes away for longer than the time left before the deadline (and its
    // stop and start add seconds of their own before the outage is over).
    CompletableFuture<Void> outage =
        CompletableFuture.runAsync(() -> guestB.restartApiServer(DRAIN_TIMEOUT.plusSeconds(5)));
    try {
      awaitDeleted(world.infra(), NS_B, vm, uid);
      assertFalse(outage.isDone(), "deleted while the guest API server was still down");
      awaitEvent(world.infra(), NS_B, vm, "DrainDeadlinePassed");
      awaitEvent(world.infra(), NS_B, vm, "GuestAPIUnavailable");
    } finally {
      outage.get(2, java.util.concurrent.TimeUnit.MINUTES);
    }
  }
}
