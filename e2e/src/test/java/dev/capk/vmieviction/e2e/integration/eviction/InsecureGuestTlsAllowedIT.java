package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.event;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12 item 4, the operator's way out: with {@code --allow-insecure-guest-tls} a kubeconfig
 * that skips TLS verification (the case HostileInputIT shows refused by default) is used. Its CA
 * data is removed too, so only the skipped verification can make the connection work.
 */
class InsecureGuestTlsAllowedIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  static final String NS = "ev-insecure-allowed";
  static final String TENANT = "insecure-tenant";

  @BeforeAll
  static void start() throws Exception {
    String insecure =
        world
            .guest()
            .adminKubeconfigYaml()
            .replaceFirst(
                "(?m)^(\\s*)certificate-authority-data: \\S+$", "$1insecure-skip-tls-verify: true");
    assertFalse(insecure.contains("certificate-authority"));
    assertTrue(insecure.contains("insecure-skip-tls-verify: true"));
    world.tenant(NS, TENANT, insecure);
    world.startLeaderElectedController(
        "vmi-eviction-insecure-it",
        NS,
        flags(
            "--allow-insecure-guest-tls --drain-timeout 5m --drain-retry-interval 1s --drain-attempt-timeout 3s"));
  }

  @Test
  void withAllowInsecureGuestTlsAKubeconfigSkippingVerificationIsUsed() throws Exception {
    String vm = unique("vm-insecure");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    evacuate(world.infra(), NS, vm, "infra-node-i1");
    awaitDeleted(world.infra(), NS, vm, uid);
    awaitEvent(world.infra(), NS, vm, "DrainSucceeded");
    assertTrue(
        unschedulable(node(world.guest(), vm)),
        "the guest node was cordoned through the insecure kubeconfig");
    assertTrue(event(world.infra(), NS, vm, "KubeconfigInvalid").isEmpty());
  }
}
