package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
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
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12 item 4, the operator's way out: with {@code --allow-insecure-guest-tls} a kubeconfig
 * that skips TLS verification (the case HostileInputIT shows refused by default) is used. Its CA
 * data is removed too, so only the skipped verification can make the connection work.
 */
class InsecureGuestTlsAllowedIT {

  @RegisterExtension
  static final LocalClusterExtension infraExt =
      LocalClusterExtension.shared("infra", LocalCluster.Builder::withAll);

  @RegisterExtension
  static final LocalClusterExtension guestExt =
      LocalClusterExtension.shared("guest-a", LocalCluster.Builder::withAll);

  static final String NS = "ev-insecure-allowed";
  static final String TENANT = "insecure-tenant";

  static LocalCluster infra;
  static LocalCluster guest;
  static Manager manager;

  @BeforeAll
  static void start() throws Exception {
    infra = infraExt.cluster();
    guest = guestExt.cluster();
    Crds.installTestCrds(infra);
    Path kubeconfig =
        EvictionFixture.controllerKubeconfig(
            infra, EvictionFixture.tempDir("vmi-eviction-insecure-it"));
    EvictionFixture.namespace(infra, NS);
    EvictionFixture.cluster(infra, NS, TENANT);
    String insecure =
        guest
            .adminKubeconfigYaml()
            .replaceFirst(
                "(?m)^(\\s*)certificate-authority-data: \\S+$", "$1insecure-skip-tls-verify: true");
    assertFalse(insecure.contains("certificate-authority"));
    assertTrue(insecure.contains("insecure-skip-tls-verify: true"));
    EvictionFixture.kubeconfigSecret(infra, NS, TENANT, insecure);
    manager =
        Main.start(
            "--kubeconfig",
            kubeconfig.toString(),
            "--leader-elect",
            "--leader-election-namespace",
            EvictionFixture.CONTROLLER_NAMESPACE,
            "--leader-election-id",
            "vmi-eviction-insecure-it",
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
            "--allow-insecure-guest-tls",
            "--drain-timeout",
            "5m",
            "--drain-retry-interval",
            "1s",
            "--drain-attempt-timeout",
            "3s");
    Await.until("controller ready", WAIT, manager::ready);
  }

  @AfterAll
  static void stop() {
    if (manager != null) {
      manager.close();
    }
  }

  @Test
  void withAllowInsecureGuestTlsAKubeconfigSkippingVerificationIsUsed() throws Exception {
    String vm = unique("vm-insecure");
    guest.kwokNodes().createNamed(vm, Map.of());
    String uid = vmi(infra, NS, vm, TENANT, "External");
    evacuate(infra, NS, vm, "infra-node-i1");
    awaitDeleted(infra, NS, vm, uid);
    awaitEvent(infra, NS, vm, "DrainSucceeded");
    assertTrue(
        unschedulable(node(guest, vm)),
        "the guest node was cordoned through the insecure kubeconfig");
    assertTrue(event(infra, NS, vm, "KubeconfigInvalid").isEmpty());
  }
}
