package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A pod whose eviction a PodDisruptionBudget refused is evicted as soon as the budget's status
 * allows it (the guest cluster's budget watch wakes its drain), not when the retry timer comes due:
 * with {@code --drain-retry-interval 60s}, after three refusals the next timed retry is 20 s away.
 */
class BudgetStatusWakeIT {

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
    dir = EvictionFixture.tempDir("vmi-eviction-budget-wake-it");
  }

  @AfterEach
  void stopController() {
    if (manager != null) {
      manager.close();
    }
  }

  @Test
  void aPodRefusedByABudgetIsEvictedWhenTheBudgetAllowsNotAtTheNextRetry() throws Exception {
    Path kubeconfig = EvictionFixture.controllerKubeconfig(infra, dir);
    String ns = unique("budget-wake");
    EvictionFixture.namespace(infra, ns);
    EvictionFixture.cluster(infra, ns, "tenant");
    EvictionFixture.kubeconfigSecret(infra, ns, "tenant", guest.adminKubeconfigYaml());

    // One pod, on the VMI's guest node, under a budget that keeps it: minAvailable 1.
    String vm = unique("vm-wake");
    String other = unique("vm-spare");
    guest.kwokNodes().createNamed(vm, Map.of());
    guest.kwokNodes().createNamed(other, Map.of());
    EvictionFixture.cordon(guest, other, true);
    String gns = unique("held");
    workload(guest, gns, "held", 1, 1, List.of(vm, other));
    EvictionFixture.cordon(guest, other, false);
    assertEquals(1, podsOn(guest, gns, vm).size(), "the pod runs on the VMI's guest node");
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

    double before = evictionRequests();
    evacuate(infra, ns, vm, "infra-node-1");
    // Refused at once, after 5 s and after 10 s more: the next timed retry is 20 s later.
    Await.until("three refused evictions", WAIT, () -> evictionRequests() - before >= 3);

    // A second replica (on the spare node: the VMI's node is cordoned) lets the budget allow one.
    guest.kubectl().runOrFail(null, "-n", gns, "scale", "deployment/held", "--replicas=2");
    Await.until("the budget allows a disruption", WAIT, () -> disruptionsAllowed(gns) >= 1);

    Await.until(
        "the refused pod evicted, long before the drain's next timed retry",
        Duration.ofSeconds(8),
        () ->
            podsOn(guest, gns, vm).stream()
                .allMatch(p -> p.getMetadata().getDeletionTimestamp() != null));
    awaitDeleted(infra, ns, vm, uid);
  }

  static int disruptionsAllowed(String ns) throws Exception {
    V1PodDisruptionBudget pdb =
        new PolicyV1Api(guest.client()).readNamespacedPodDisruptionBudget("held-pdb", ns).execute();
    return pdb.getStatus() == null || pdb.getStatus().getDisruptionsAllowed() == null
        ? 0
        : pdb.getStatus().getDisruptionsAllowed();
  }

  private static final Pattern REQUESTS =
      Pattern.compile("(?m)^apiserver_request_total\\{([^}]*)} ([0-9.eE+]+)$");

  /** Evictions asked of the guest API server so far (every client; only the controller evicts). */
  static double evictionRequests() {
    return evictionRequests(guest);
  }

  /** Evictions asked of {@code guest}'s API server so far, by every client. */
  static double evictionRequests(LocalCluster guest) {
    String metrics = guest.kubectl().runOrFail(null, "get", "--raw", "/metrics");
    double sum = 0;
    Matcher m = REQUESTS.matcher(metrics);
    while (m.find()) {
      String labels = m.group(1);
      if (labels.contains("verb=\"POST\"")
          && labels.contains("resource=\"pods\"")
          && labels.contains("subresource=\"eviction\"")) {
        sum += Double.parseDouble(m.group(2));
      }
    }
    return sum;
  }
}
