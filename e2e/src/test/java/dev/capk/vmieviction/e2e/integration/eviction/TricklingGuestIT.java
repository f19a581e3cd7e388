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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.TricklingProxy;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
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

  @RegisterExtension
  static final LocalClusterExtension infraExt =
      LocalClusterExtension.shared("infra", LocalCluster.Builder::withAll);

  @RegisterExtension
  static final LocalClusterExtension guestExt =
      LocalClusterExtension.shared("guest-a", LocalCluster.Builder::withAll);

  /** Long enough for several bounded guest requests, short enough for a test. */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(60);

  static final String NS = "ev-trickle";
  static final String TRICKLING = "trickling-tenant";
  static final String HEALTHY = "healthy-tenant";

  static LocalCluster infra;
  static LocalCluster guest;
  static TricklingProxy proxy;
  static Manager manager;

  @BeforeAll
  static void start() throws Exception {
    infra = infraExt.cluster();
    guest = guestExt.cluster();
    Crds.installTestCrds(infra);
    Path kubeconfig =
        EvictionFixture.controllerKubeconfig(
            infra, EvictionFixture.tempDir("vmi-eviction-trickle-it"));
    proxy = TricklingProxy.start(URI.create(guest.serverUrl()).getPort(), Duration.ofSeconds(2));
    EvictionFixture.namespace(infra, NS);
    // Both tenants' guest clusters are the same real API server: one reached through the proxy.
    EvictionFixture.cluster(infra, NS, TRICKLING);
    EvictionFixture.kubeconfigSecret(
        infra, NS, TRICKLING, guest.adminKubeconfigYaml().replace(guest.serverUrl(), proxy.url()));
    EvictionFixture.cluster(infra, NS, HEALTHY);
    EvictionFixture.kubeconfigSecret(infra, NS, HEALTHY, guest.adminKubeconfigYaml());
    manager =
        Main.start(
            "--kubeconfig",
            kubeconfig.toString(),
            "--leader-elect",
            "--leader-election-namespace",
            EvictionFixture.CONTROLLER_NAMESPACE,
            "--leader-election-id",
            "vmi-eviction-trickle-it",
            "--leader-election-lease-duration",
            "4s",
            "--leader-election-renew-deadline",
            "3s",
            "--leader-election-retry-period",
            "500ms",
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--namespace",
            NS,
            "--workers",
            "1",
            "--drain-timeout",
            DRAIN_TIMEOUT.toSeconds() + "s",
            "--drain-retry-interval",
            "1s",
            "--drain-attempt-timeout",
            "3s");
    Await.until("controller ready", WAIT, manager::ready);
  }

  @AfterAll
  static void stop() {
    // The proxy first: a worker still reading from it is let go.
    if (proxy != null) {
      proxy.close();
    }
    if (manager != null) {
      manager.close();
    }
  }

  @Test
  void aTricklingGuestApiServerNeverHoldsTheOnlyWorker() throws Exception {
    String stalled = unique("vm-trickle");
    String healthy = unique("vm-healthy");
    guest.kwokNodes().createNamed(stalled, Map.of());
    guest.kwokNodes().createNamed(healthy, Map.of());

    proxy.arm();
    String stalledUid = vmi(infra, NS, stalled, TRICKLING, "External");
    evacuate(infra, NS, stalled, "infra-node-t1");
    // The only worker is now in a request to the trickling server.
    awaitEvent(infra, NS, stalled, "DrainStarted");
    Await.until(
        "the controller reached the trickling guest", WAIT, () -> proxy.acceptedConnections() > 0);

    String healthyUid = vmi(infra, NS, healthy, HEALTHY, "External");
    evacuate(infra, NS, healthy, "infra-node-t1");

    awaitDeleted(infra, NS, healthy, healthyUid);
    assertFalse(
        deletedOrDeleting(infra, NS, stalled, stalledUid),
        "the healthy tenant's VMI was evacuated while the trickling one still waited for its deadline");
    awaitEvent(infra, NS, healthy, "DrainSucceeded");
    assertTrue(unschedulable(node(guest, healthy)));

    Await.until(
        "VMI " + stalled + " deleted at its deadline",
        DRAIN_TIMEOUT.plus(WAIT),
        () -> deletedOrDeleting(infra, NS, stalled, stalledUid));
    awaitEvent(infra, NS, stalled, "DrainDeadlinePassed");
    awaitEvent(infra, NS, stalled, "GuestAPIUnavailable");
    assertTrue(event(infra, NS, stalled, "DrainSucceeded").isEmpty());
    assertFalse(
        unschedulable(node(guest, stalled)),
        "no request through the trickling server ever completed");
  }
}
