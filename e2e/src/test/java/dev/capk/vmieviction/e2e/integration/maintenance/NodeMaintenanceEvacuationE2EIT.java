package dev.capk.vmieviction.e2e.integration.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * End to end, with the controller running from its jar (--enable-node-maintenance) and the KubeVirt
 * stand-in: a NodeMaintenance of an infra node hosting External VMIs of two tenants reaches
 * Succeeded only after each VMI's guest node was drained and the VMI was recreated elsewhere. Uses
 * the end-to-end suites' clusters, so a full run starts no extra ones.
 */
class NodeMaintenanceEvacuationE2EIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("nmflow-infra");

  @RegisterExtension
  static final LocalClusterExtension guestA = LocalClusterExtension.shared("e2e-guest-a");

  @RegisterExtension
  static final LocalClusterExtension guestB = LocalClusterExtension.shared("e2e-guest-b");

  static final Map<String, String> uidBefore = new HashMap<>();
  static EvacuationWorld world;
  static TenantCluster tenantA;
  static TenantCluster tenantB;
  static InvariantRecorder recorder;
  static ControllerProcess controller;
  static String drained;
  static String nm;

  @BeforeAll
  static void maintainAnInfraNode() throws Exception {
    LocalCluster c = infra.cluster();
    MaintenanceFixture.installCrd(c);
    world = EvacuationWorld.start(c, "nmflow", 2);
    drained = world.infraNodes().get(0);
    tenantA = world.addTenant("a", guestA.cluster());
    tenantB = world.addTenant("b", guestB.cluster());
    world.addVmsOn(drained, tenantA, "External", "nmflow-a-0");
    world.addVmsOn(drained, tenantB, "External", "nmflow-b-0");
    // Tenant A's second guest node, on the other infra node: where its workload goes meanwhile.
    world.addVmsOn(world.infraNodes().get(1), tenantA, "External", "nmflow-a-1");
    tenantA.deployProtectedWorkload("nm-shop", "web", 4, 2);
    tenantA.awaitAvailable("nm-shop", "web", 4);
    uidBefore.put("nmflow-a-0", world.vmiUid(tenantA, "nmflow-a-0"));
    uidBefore.put("nmflow-b-0", world.vmiUid(tenantB, "nmflow-b-0"));

    recorder = new InvariantRecorder(c, List.of(tenantA, tenantB));
    recorder.startTrackingAvailability();
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--kubeconfig=" + c.kubeconfig(),
                "--drain-timeout=5m",
                "--enable-node-maintenance"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("nmflow", c.dir(), flags);

    nm = MaintenanceFixture.unique("nmflow");
    MaintenanceFixture.create(c, nm, drained, "infra maintenance, tenants first");
    Await.until(
        "NodeMaintenance " + nm + " Succeeded",
        Duration.ofMinutes(4),
        () -> "Succeeded".equals(MaintenanceFixture.phase(c, nm)));
  }

  @AfterAll
  static void stop() {
    if (nm != null) {
      infra
          .cluster()
          .kubectl()
          .run(null, Duration.ofSeconds(30), "delete", "nm", nm, "--wait=false");
    }
    if (controller != null) controller.close();
    if (recorder != null) recorder.close();
    if (world != null) world.close();
  }

  @Test
  void eachGuestNodeWasCordonedAndDrainedBeforeItsVmiWasDeleted() {
    for (var e : Map.of("nmflow-a-0", tenantA, "nmflow-b-0", tenantB).entrySet()) {
      String uid = uidBefore.get(e.getKey());
      Await.until(
          "deletion of " + e.getKey() + " recorded",
          Duration.ofSeconds(30),
          () -> recorder.drainCheck(uid) != null);
      InvariantRecorder.DrainCheck check = recorder.drainCheck(uid);
      assertTrue(check.drained(), e.getKey() + ": guest node when the VMI was deleted: " + check);
      assertTrue(
          recorder.cordonSeenBeforeDeletion(e.getValue(), e.getKey(), uid),
          e.getKey() + " cordoned first");
    }
    assertTrue(
        recorder.minAvailable(tenantA, "nm-shop", "web") >= 2,
        recorder.minAvailableByWorkload().toString());
  }

  @Test
  void theVmisWereRecreatedOnAnotherInfraNode() {
    for (var e : Map.of("nmflow-a-0", tenantA, "nmflow-b-0", tenantB).entrySet()) {
      String vmi = e.getKey();
      Await.until(
          vmi + " Running elsewhere",
          Duration.ofSeconds(60),
          () -> {
            String uid = world.vmiUid(e.getValue(), vmi);
            return !uid.isBlank()
                && !uid.equals(uidBefore.get(vmi))
                && "Running".equals(world.vmiField(e.getValue(), vmi, ".status.phase"));
          });
      assertNotEquals(drained, world.vmiField(e.getValue(), vmi, ".status.nodeName"));
      assertEquals(1, recorder.deletions(uidBefore.get(vmi)), vmi + " deleted exactly once");
    }
  }

  @Test
  void theMaintenanceReportsTheNodeEmptyAndCordoned() throws Exception {
    Map<String, Object> st = MaintenanceFixture.status(infra.cluster(), nm);
    assertEquals(100, MaintenanceFixture.intField(st, "drainProgress"));
    assertTrue(MaintenanceFixture.intField(st, "evictionPods") >= 2, st.toString());
    assertTrue(MaintenanceFixture.nodeState(infra.cluster(), drained).unschedulable());
    assertTrue(
        MaintenanceFixture.podsOn(infra.cluster(), drained).stream()
            .noneMatch(p -> p.contains("virt-launcher")),
        MaintenanceFixture.podsOn(infra.cluster(), drained).toString());
  }
}
