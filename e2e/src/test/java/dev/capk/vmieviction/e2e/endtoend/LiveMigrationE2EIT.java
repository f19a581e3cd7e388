package dev.capk.vmieviction.e2e.endtoend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Closing;
import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.ScenarioClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.CordonedNodes;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import io.kubernetes.client.informer.SharedInformerFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The proof of live migration first, as users meet it: the controller from its jar with
 * {@code --live-migration=prefer}, the real {@code kubectl drain} of an infra node holding three
 * External VMIs, two of them LiveMigratable. The two migrate (same UID, another node, their guest
 * nodes never cordoned, recorded from a watch); the third is drained and deleted; the infra drain
 * completes.
 */
class LiveMigrationE2EIT {
  @RegisterExtension static final ScenarioClusterExtension infra = E2EClusters.infra();
  @RegisterExtension static final ScenarioClusterExtension guest = E2EClusters.guestA();

  private static EvacuationWorld world;
  private static TenantCluster tenant;
  private static ControllerProcess controller;
  private static String drained;
  private static Kubectl.Result drainResult;
  private static final Map<String, String> uidBefore = new HashMap<>();
  private static final Set<String> everCordoned = ConcurrentHashMap.newKeySet();

  @BeforeAll
  static void drainAnInfraNode() throws Exception {
    world = EvacuationWorld.start(infra.cluster(), "lme", 2);
    drained = world.infraNodes().get(0);
    tenant = world.addTenant("a", guest.cluster());
    world.addVmsOn(drained, tenant, "External", "lme-0", "lme-1", "lme-2");
    for (String vm : List.of("lme-0", "lme-1")) {
      // KubeVirt's LiveMigratable condition, as virt-controller sets it on a migratable VMI.
      infra
          .cluster()
          .kubectl()
          .runOrFail(
              null,
              "-n",
              tenant.namespace(),
              "patch",
              "vmi",
              vm,
              "--subresource=status",
              "--type=merge",
              "-p",
              "{\"status\":{\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":\"True\"}]}}");
    }
    for (String vm : List.of("lme-0", "lme-1", "lme-2")) {
      uidBefore.put(vm, world.vmiUid(tenant, vm));
    }
    SharedInformerFactory watch = watchGuestNodes(guest.cluster());
    try {
      List<String> flags =
          new ArrayList<>(
              List.of(
                  "--kubeconfig=" + infra.cluster().kubeconfig(),
                  "--drain-timeout=2m",
                  "--drain-reserve=30s",
                  "--live-migration=prefer"));
      flags.addAll(world.controllerNamespaceFlags());
      controller = ControllerProcess.start("live-migration", infra.cluster().dir(), flags);
      drainResult = world.drainInfraNode(drained, Duration.ofMinutes(3));
      Await.until(
          "lme-2 recreated",
          Duration.ofSeconds(60),
          () -> {
            String uid = world.vmiUid(tenant, "lme-2");
            return !uid.isBlank() && !uid.equals(uidBefore.get("lme-2"));
          });
    } finally {
      watch.stopAllRegisteredInformers();
      infra.cluster().kubectl().run(null, Duration.ofSeconds(30), "uncordon", drained);
    }
  }

  @AfterAll
  static void stop() {
    Closing.all(controller, world);
  }

  @Test
  void theInfraDrainCompletes() {
    assertEquals(
        0, drainResult.exitCode(), "kubectl drain: " + drainResult.stderr() + drainResult.stdout());
  }

  @Test
  void theTwoLiveMigratableVmisMigrateAndTheirGuestNodesAreNeverCordoned() throws Exception {
    for (String vm : List.of("lme-0", "lme-1")) {
      assertEquals(uidBefore.get(vm), world.vmiUid(tenant, vm), vm + " not deleted");
      assertNotEquals(drained, world.vmiField(tenant, vm, ".status.nodeName"), vm + " moved");
      assertFalse(everCordoned.contains(vm), vm + " cordoned: " + everCordoned);
    }
    Await.until(
        "two successful migrations counted",
        Duration.ofSeconds(30),
        () ->
            controller
                .metrics()
                .contains("vmi_eviction_live_migrations_total{result=\"succeeded\"} 2.0"));
  }

  @Test
  void theVmiThatIsNotLiveMigratableIsDrainedAndDeleted() {
    assertNotEquals(uidBefore.get("lme-2"), world.vmiUid(tenant, "lme-2"));
    assertTrue(everCordoned.contains("lme-2"), "its guest node was cordoned for the drain");
  }

  private static SharedInformerFactory watchGuestNodes(KubeCluster guest) {
    return CordonedNodes.watch(guest, everCordoned);
  }
}
