package dev.capk.vmieviction.e2e.endtoend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Closing;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.ScenarioClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole flow, as users meet it: `kubectl drain` of an infra node holding three External VMIs of
 * two tenant clusters (and a LiveMigrate and a None VMI), with the controller running from its jar
 * and the KubeVirt stand-in answering for KubeVirt.
 */
class InfraDrainE2EIT {
  @RegisterExtension static final ScenarioClusterExtension infra = E2EClusters.infra();
  @RegisterExtension static final ScenarioClusterExtension guestA = E2EClusters.guestA();
  @RegisterExtension static final ScenarioClusterExtension guestB = E2EClusters.guestB();

  private static EvacuationWorld world;
  private static TenantCluster tenantA;
  private static TenantCluster tenantB;
  private static InvariantRecorder recorder;
  private static ControllerProcess controller;
  private static String drained;
  private static Kubectl.Result drainResult;
  private static final Map<String, String> uidBefore = new java.util.HashMap<>();

  @BeforeAll
  static void drainAnInfraNode() throws Exception {
    world = EvacuationWorld.start(infra.cluster(), "flow", 3);
    drained = world.infraNodes().get(0);
    tenantA = world.addTenant("a", guestA.cluster());
    tenantB = world.addTenant("b", guestB.cluster());
    world.addVmsOn(drained, tenantA, "External", "flow-a-0", "flow-a-1");
    world.addVmsOn(world.infraNodes().get(1), tenantA, "External", "flow-a-2");
    world.addVmsOn(drained, tenantB, "External", "flow-b-0");
    world.addVmsOn(drained, tenantB, "LiveMigrate", "flow-b-lm");
    world.addVmsOn(drained, tenantB, "None", "flow-b-none");
    world.addVmsOn(world.infraNodes().get(2), tenantB, "External", "flow-b-1");
    tenantA.deployProtectedWorkload("shop", "web", 6, 4);
    tenantB.deployProtectedWorkload("data", "db", 4, 3);
    tenantA.awaitAvailable("shop", "web", 6);
    tenantB.awaitAvailable("data", "db", 4);
    for (String vmi : List.of("flow-a-0", "flow-a-1"))
      uidBefore.put(vmi, world.vmiUid(tenantA, vmi));
    for (String vmi : List.of("flow-b-0", "flow-b-lm", "flow-b-none"))
      uidBefore.put(vmi, world.vmiUid(tenantB, vmi));

    recorder = new InvariantRecorder(infra.cluster(), List.of(tenantA, tenantB));
    recorder.startTrackingAvailability();
    List<String> flags =
        new ArrayList<>(
            List.of("--kubeconfig=" + infra.cluster().kubeconfig(), "--drain-timeout=5m"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("flow", infra.cluster().dir(), flags);

    long began = System.nanoTime();
    drainResult = world.drainInfraNode(drained, Duration.ofMinutes(4));
    // Printed, never asserted: timing goals live in the benchmarks.
    System.out.printf(
        "e2e: kubectl drain %s took %d ms%n", drained, (System.nanoTime() - began) / 1_000_000);
  }

  @AfterAll
  static void stop() {
    Closing.all(controller, recorder, world);
  }

  @Test
  void theInfraDrainCompletes() {
    assertEquals(
        0, drainResult.exitCode(), "kubectl drain: " + drainResult.stderr() + drainResult.stdout());
    assertTrue(drainResult.stdout().contains("node/" + drained + " drained"), drainResult.stdout());
  }

  @Test
  void eachExternalVmisGuestNodeWasCordonedAndDrainedBeforeTheVmiWasDeleted() {
    for (var e : Map.of("flow-a-0", tenantA, "flow-a-1", tenantA, "flow-b-0", tenantB).entrySet()) {
      String uid = uidBefore.get(e.getKey());
      Await.until(
          "deletion of " + e.getKey() + " recorded",
          Duration.ofSeconds(30),
          () -> recorder.drainCheck(uid) != null);
      InvariantRecorder.DrainCheck check = recorder.drainCheck(uid);
      assertTrue(check.drained(), e.getKey() + ": guest node when the VMI was deleted: " + check);
      assertTrue(
          recorder.cordonSeenBeforeDeletion(e.getValue(), e.getKey(), uid),
          e.getKey() + " cordoned before deletion");
    }
  }

  @Test
  void eachEvacuatedVmiIsDeletedExactlyOnceAndItsSuccessorIsLeftRunning() {
    for (var e : Map.of("flow-a-0", tenantA, "flow-a-1", tenantA, "flow-b-0", tenantB).entrySet()) {
      String vmi = e.getKey();
      Await.until(
          vmi + " replaced by a new VMI",
          Duration.ofSeconds(60),
          () -> {
            String uid = world.vmiUid(e.getValue(), vmi);
            return !uid.isBlank() && !uid.equals(uidBefore.get(vmi));
          });
      assertEquals(1, recorder.deletions(uidBefore.get(vmi)), vmi + " deleted exactly once");
      String successor = world.vmiUid(e.getValue(), vmi);
      assertEquals(
          0,
          recorder.deletions(successor),
          vmi + "'s successor " + successor + " must not be deleted");
      assertEquals("", world.vmiField(e.getValue(), vmi, ".metadata.deletionTimestamp"));
    }
  }

  @Test
  void guestWorkloadsNeverFellBelowTheirBudgets() {
    int web = recorder.minAvailable(tenantA, "shop", "web");
    int db = recorder.minAvailable(tenantB, "data", "db");
    assertTrue(
        web >= 4,
        "web had as few as "
            + web
            + " available pods, budget 4: "
            + recorder.minAvailableByWorkload());
    assertTrue(
        db >= 3,
        "db had as few as "
            + db
            + " available pods, budget 3: "
            + recorder.minAvailableByWorkload());
  }

  @Test
  void theVmisCameBackOnAnotherInfraNodeAndTheirGuestNodesWereUncordoned() {
    for (var e : Map.of("flow-a-0", tenantA, "flow-a-1", tenantA, "flow-b-0", tenantB).entrySet()) {
      String vmi = e.getKey();
      TenantCluster t = e.getValue();
      Await.until(
          vmi + " back and Running elsewhere",
          Duration.ofSeconds(60),
          () -> {
            String uid = world.vmiUid(t, vmi);
            return !uid.isBlank()
                && !uid.equals(uidBefore.get(vmi))
                && "Running".equals(world.vmiField(t, vmi, ".status.phase"));
          });
      assertNotEquals(drained, world.vmiField(t, vmi, ".status.nodeName"));
      Await.until(
          "guest node " + vmi + " uncordoned",
          Duration.ofSeconds(90),
          () -> !t.guest().kubectl().cordoned(vmi));
    }
  }

  @Test
  void liveMigrateAndNoneVmisAreNeverTouchedByTheController() {
    for (String vmi : List.of("flow-b-lm", "flow-b-none")) {
      Await.until(
          vmi + " off the drained node",
          Duration.ofSeconds(60),
          () -> {
            String node = world.vmiField(tenantB, vmi, ".status.nodeName");
            return !node.isBlank() && !node.equals(drained);
          });
      assertEquals(
          "",
          world.vmiField(
              tenantB,
              vmi,
              ".metadata.annotations.capk\\.cluster\\.x-k8s\\.io/vmi-drain-start-time"),
          vmi + " has no drain start annotation");
      assertFalse(tenantB.guest().kubectl().cordoned(vmi), "guest node " + vmi + " never cordoned");
    }
    assertEquals(
        uidBefore.get("flow-b-lm"),
        world.vmiUid(tenantB, "flow-b-lm"),
        "live migration keeps the VMI");
  }

  @Test
  void drainStartTimesNeverMoved() {
    for (String vmi : List.of("flow-a-0", "flow-a-1")) {
      assertTrue(
          recorder.drainStarts(tenantA.namespace(), vmi).size() <= 1,
          vmi + ": " + recorder.drainStarts(tenantA.namespace(), vmi));
    }
    assertTrue(recorder.drainStarts(tenantB.namespace(), "flow-b-0").size() <= 1);
  }
}
