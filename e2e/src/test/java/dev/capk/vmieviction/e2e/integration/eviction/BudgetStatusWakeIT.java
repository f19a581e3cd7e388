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
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A pod whose eviction a PodDisruptionBudget refused is evicted as soon as the budget's status
 * allows it (the guest cluster's budget watch wakes its drain), not when the retry timer comes due:
 * with {@code --drain-retry-interval 60s}, after three refusals the next timed retry is 20 s away.
 */
class BudgetStatusWakeIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  @Test
  void aPodRefusedByABudgetIsEvictedWhenTheBudgetAllowsNotAtTheNextRetry() throws Exception {
    String ns = world.tenant("budget-wake");

    // One pod, on the VMI's guest node, under a budget that keeps it: minAvailable 1.
    String vm = unique("vm-wake");
    String gns = unique("held");
    workloadOnOneNode(world.guest(), gns, "held", 1, 1, vm, unique("vm-spare"));
    String uid = vmi(world.infra(), ns, vm, "tenant", "External");

    world.startController(ns, "--drain-retry-interval", "60s");

    double before = evictionRequests();
    evacuate(world.infra(), ns, vm, "infra-node-1");
    // Refused at once, after 5 s and after 10 s more: the next timed retry is 20 s later.
    Await.until("three refused evictions", WAIT, () -> evictionRequests() - before >= 3);

    // A second replica (on the spare node: the VMI's node is cordoned) lets the budget allow one.
    world.guest().kubectl().runOrFail(null, "-n", gns, "scale", "deployment/held", "--replicas=2");
    Await.until("the budget allows a disruption", WAIT, () -> disruptionsAllowed(gns) >= 1);

    Await.until(
        "the refused pod evicted, long before the drain's next timed retry",
        Duration.ofSeconds(8),
        () ->
            podsOn(world.guest(), gns, vm).stream()
                .allMatch(p -> p.getMetadata().getDeletionTimestamp() != null));
    awaitDeleted(world.infra(), ns, vm, uid);
  }

  /**
   * {@link EvictionFixture#workload} with all {@code replicas} on new node {@code vm}; new node
   * {@code spare}, free again once they run, takes their replacements.
   */
  static void workloadOnOneNode(
      LocalCluster guest,
      String ns,
      String app,
      int replicas,
      int minAvailable,
      String vm,
      String spare)
      throws Exception {
    guest.kwokNodes().createNamed(vm, Map.of());
    guest.kwokNodes().createNamed(spare, Map.of());
    EvictionFixture.cordon(guest, spare, true);
    workload(guest, ns, app, replicas, minAvailable, List.of(vm, spare));
    EvictionFixture.cordon(guest, spare, false);
    assertEquals(replicas, podsOn(guest, ns, vm).size(), "all pods run on the VMI's guest node");
  }

  static int disruptionsAllowed(String ns) throws Exception {
    V1PodDisruptionBudget pdb =
        new PolicyV1Api(world.guest().client())
            .readNamespacedPodDisruptionBudget("held-pdb", ns)
            .execute();
    return pdb.getStatus() == null || pdb.getStatus().getDisruptionsAllowed() == null
        ? 0
        : pdb.getStatus().getDisruptionsAllowed();
  }

  private static final Pattern REQUESTS =
      Pattern.compile("(?m)^apiserver_request_total\\{([^}]*)} ([0-9.eE+]+)$");

  /** Evictions asked of the guest API server so far (every client; only the controller evicts). */
  static double evictionRequests() {
    return evictionRequests(world.guest());
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
