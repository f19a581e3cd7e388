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
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.StallingProxy;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A drain that cannot finish never holds a worker: reconciles return while budgets still refuse, a
 * pod leaving the guest node wakes its VMI at once, and a tenant whose API server stalls holds at
 * most its share of the workers. Each test runs its own controller with two workers, so that the
 * old behaviour (a reconcile held through a whole drain pass) would visibly keep others waiting.
 */
class NonBlockingDrainIT {

  @RegisterExtension
  static final LocalClusterExtension infraExt =
      LocalClusterExtension.shared("infra", LocalCluster.Builder::withAll);

  @RegisterExtension
  static final LocalClusterExtension guestExt =
      LocalClusterExtension.shared("guest-a", LocalCluster.Builder::withAll);

  static LocalCluster infra;
  static LocalCluster guest;
  static Path kubeconfig;
  Manager manager;

  @BeforeAll
  static void clusters() throws Exception {
    infra = infraExt.cluster();
    guest = guestExt.cluster();
    Crds.installTestCrds(infra);
    kubeconfig =
        EvictionFixture.controllerKubeconfig(
            infra, EvictionFixture.tempDir("vmi-eviction-nonblocking-it"));
  }

  @AfterEach
  void stopController() {
    if (manager != null) {
      manager.close();
    }
  }

  /** A tenant namespace with its Cluster and kubeconfig Secret leading to {@code guestYaml}. */
  static String tenant(String prefix, String guestYaml) {
    String ns = unique(prefix);
    EvictionFixture.namespace(infra, ns);
    EvictionFixture.cluster(infra, ns, "tenant");
    EvictionFixture.kubeconfigSecret(infra, ns, "tenant", guestYaml);
    return ns;
  }

  void startController(List<String> namespaces, String... flags) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--kubeconfig",
                kubeconfig.toString(),
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "127.0.0.1:0",
                "--workers",
                "2"));
    namespaces.forEach(ns -> args.addAll(List.of("--namespace", ns)));
    args.addAll(List.of(flags));
    manager = Main.start(args.toArray(String[]::new));
    Await.until("controller ready", WAIT, manager::ready);
  }

  @Test
  void reconcilesReturnWhileBudgetsStillRefuseSoAFreeVmiIsNotKeptWaiting() throws Exception {
    String ns = tenant("ev-hol", guest.adminKubeconfigYaml());
    // A drain pass could hold a worker for 5 minutes: two blocked VMIs would hold both workers.
    startController(List.of(ns), "--drain-attempt-timeout", "5m");
    List<String> blocked = List.of(unique("vm-blocked"), unique("vm-blocked"));
    List<String> guestNamespaces = new ArrayList<>();
    for (String vm : blocked) {
      guest.kwokNodes().createNamed(vm, Map.of());
      String guestNs = unique("never");
      guestNamespaces.add(guestNs);
      // minAvailable = replicas: the budget never allows a disruption.
      workload(guest, guestNs, "db", 1, 1, List.of(vm));
      vmi(infra, ns, vm, "tenant", "External");
      evacuate(infra, ns, vm, "infra-node-1");
    }
    for (String vm : blocked) {
      Await.until(vm + " cordoned", WAIT, () -> unschedulable(node(guest, vm)));
    }

    String free = unique("vm-free");
    guest.kwokNodes().createNamed(free, Map.of());
    String freeUid = vmi(infra, ns, free, "tenant", "External");
    evacuate(infra, ns, free, "infra-node-1");
    awaitDeleted(infra, ns, free, freeUid);

    // The blocked drains are still blocked: their VMIs wait, their pods stay, the budgets refuse.
    for (int i = 0; i < blocked.size(); i++) {
      String vm = blocked.get(i);
      assertTrue(get(infra, ns, vm).isPresent(), vm + " still there");
      assertEquals(1, podsOn(guest, guestNamespaces.get(i), vm).size(), "pod still on " + vm);
      var pdb =
          new PolicyV1Api(guest.client())
              .readNamespacedPodDisruptionBudget("db-pdb", guestNamespaces.get(i))
              .execute();
      assertEquals(0, pdb.getStatus().getDisruptionsAllowed(), "budget still refuses");
    }
  }

  @Test
  void aPodLeavingTheGuestNodeWakesItsVmiAtOnceNotAtTheNextLook() throws Exception {
    String ns = tenant("ev-wake", guest.adminKubeconfigYaml());
    // Between two looks at the drain: 5 minutes, longer than this test waits.
    startController(List.of(ns), "--drain-retry-interval", "5m", "--drain-attempt-timeout", "2s");
    String vm = unique("vm-wake");
    // No kubelet confirms the deletion: the evicted pod stays terminating until the test says.
    EvictionFixture.readyNodeWithoutKubelet(guest, vm);
    String guestNs = unique("held");
    EvictionFixture.namespace(guest, guestNs);
    Await.until(
        "the default ServiceAccount of " + guestNs,
        WAIT,
        () -> {
          new CoreV1Api(guest.client()).readNamespacedServiceAccount("default", guestNs).execute();
          return true;
        });
    guest
        .kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Pod
        metadata: {name: held, namespace: %s}
        spec:
          nodeName: %s
          containers: [{name: main, image: held:fake}]
        """
                .formatted(guestNs, vm));
    String uid = vmi(infra, ns, vm, "tenant", "External");
    evacuate(infra, ns, vm, "infra-node-1");
    Await.until(
        "pod evicted and terminating",
        WAIT,
        () ->
            podsOn(guest, guestNs, vm).stream()
                .anyMatch(p -> p.getMetadata().getDeletionTimestamp() != null));
    // Past the first retry of the eviction (5 s): from here on only the watch, or the next look in
    // 5 minutes, can bring the VMI's next step.
    Thread.sleep(6_000);
    assertTrue(get(infra, ns, vm).isPresent(), "the VMI waits for its pod");

    guest
        .kubectl()
        .runOrFail(null, "-n", guestNs, "delete", "pod", "held", "--grace-period=0", "--force");

    awaitDeleted(infra, ns, vm, uid);
  }

  @Test
  void aTenantWhoseApiServerStallsHoldsOnlyItsShareOfTheWorkers() throws Exception {
    try (StallingProxy proxy = StallingProxy.start()) {
      String stalledNs =
          tenant("ev-stall", guest.adminKubeconfigYaml().replace(guest.serverUrl(), proxy.url()));
      String healthyNs = tenant("ev-ok", guest.adminKubeconfigYaml());
      startController(List.of(stalledNs, healthyNs), "--guest-max-in-flight", "1");
      List<String> stalled = Stream.generate(() -> unique("vm-stalled")).limit(3).toList();
      for (String vm : stalled) {
        vmi(infra, stalledNs, vm, "tenant", "External");
        evacuate(infra, stalledNs, vm, "infra-node-2");
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
                              return get(infra, stalledNs, vm)
                                  .flatMap(v -> annotation(v, EvictionAnnotations.DRAIN_START_TIME))
                                  .isPresent();
                            } catch (Exception e) {
                              return false;
                            }
                          })
                      .count()
                  >= 2);

      String vm = unique("vm-healthy");
      guest.kwokNodes().createNamed(vm, Map.of());
      String uid = vmi(infra, healthyNs, vm, "tenant", "External");
      evacuate(infra, healthyNs, vm, "infra-node-2");
      awaitDeleted(infra, healthyNs, vm, uid);

      // Deleted before any stalled request had even timed out: it never waited for them.
      for (String s : stalled) {
        assertTrue(
            event(infra, stalledNs, s, "GuestAPIUnavailable").isEmpty(),
            "no stalled request of " + s + " had ended when the healthy tenant's VMI went");
      }
      assertTrue(proxy.acceptedConnections() > 0, "the stalled tenant was reached");
    }
  }
}
