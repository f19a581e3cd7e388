package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.deletedOrDeleting;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.event;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.TricklingProxy;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12 item 5: a guest API server that accepts connections and answers one byte every two
 * seconds (each read well within the read timeout) must not hold a worker. With a single worker,
 * another tenant's VMI is evacuated while the trickling tenant's VMI waits for its deadline, at
 * which it is deleted.
 */
class TricklingGuestIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  /** Long enough for several bounded guest requests, short enough for a test. */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(60);

  static final String NS = "ev-trickle";
  static final String TRICKLING = "trickling-tenant";
  static final String HEALTHY = "healthy-tenant";

  static TricklingProxy proxy;

  @BeforeAll
  static void start() throws Exception {
    proxy = world.tricklingAndHealthyTenants(NS, TRICKLING, HEALTHY);
    world.startLeaderElectedController(
        "vmi-eviction-trickle-it",
        NS,
        flags(
            "--workers 1 --drain-timeout %ds --drain-retry-interval 1s --drain-attempt-timeout 3s"
                .formatted(DRAIN_TIMEOUT.toSeconds())));
  }

  @Test
  void aTricklingGuestApiServerNeverHoldsTheOnlyWorker() throws Exception {
    String stalled = unique("vm-trickle");
    String healthy = unique("vm-healthy");
    world.guest().kwokNodes().createNamed(stalled, Map.of());
    world.guest().kwokNodes().createNamed(healthy, Map.of());

    proxy.arm();
    String stalledUid = vmi(world.infra(), NS, stalled, TRICKLING, "External");
    evacuate(world.infra(), NS, stalled, "infra-node-t1");
    // The only worker is now in a request to the trickling server.
    awaitEvent(world.infra(), NS, stalled, "DrainStarted");
    Await.until(
        "the controller reached the trickling guest", WAIT, () -> proxy.acceptedConnections() > 0);

    String healthyUid = vmi(world.infra(), NS, healthy, HEALTHY, "External");
    evacuate(world.infra(), NS, healthy, "infra-node-t1");

    awaitDeleted(world.infra(), NS, healthy, healthyUid);
    assertFalse(
        deletedOrDeleting(world.infra(), NS, stalled, stalledUid),
        "the healthy tenant's VMI was evacuated while the trickling one still waited for its deadline");
    awaitEvent(world.infra(), NS, healthy, "DrainSucceeded");
    assertTrue(unschedulable(node(world.guest(), healthy)));

    Await.until(
        "VMI " + stalled + " deleted at its deadline",
        DRAIN_TIMEOUT.plus(WAIT),
        () -> deletedOrDeleting(world.infra(), NS, stalled, stalledUid));
    awaitEvent(world.infra(), NS, stalled, "DrainDeadlinePassed");
    awaitEvent(world.infra(), NS, stalled, "GuestAPIUnavailable");
    assertTrue(event(world.infra(), NS, stalled, "DrainSucceeded").isEmpty());
    assertFalse(
        unschedulable(node(world.guest(), stalled)),
        "no request through the trickling server ever completed");
  }
}
