package dev.capk.vmieviction.e2e.endtoend;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The controller is SIGKILLed mid-evacuation and started again: every evacuation completes, with
 * its original start time.
 */
class ControllerCrashE2EIT {
  @RegisterExtension static final ScenarioClusterExtension infra = E2EClusters.infra();
  @RegisterExtension static final ScenarioClusterExtension guestB = E2EClusters.guestB();

  private static final List<String> EVACUATED = List.of("crash-b-0", "crash-b-1");
  private static EvacuationWorld world;
  private static TenantCluster tenant;
  private static InvariantRecorder recorder;
  private static ControllerProcess controller;
  private static Kubectl.Result drainResult;
  private static final Map<String, String> uidBefore = new java.util.HashMap<>();
  private static final Map<String, String> startSeenBeforeKill = new java.util.HashMap<>();

  @BeforeAll
  static void crashMidEvacuation() throws Exception {
    world = EvacuationWorld.start(infra.cluster(), "crash", 2);
    String drained = world.infraNodes().get(0);
    tenant = world.addTenant("b", guestB.cluster());
    world.addVmsOn(drained, tenant, "External", EVACUATED.toArray(String[]::new));
    world.addVmsOn(world.infraNodes().get(1), tenant, "External", "crash-b-2");
    // One disruption at a time over many pods: the drain takes long enough to be interrupted.
    tenant.deployProtectedWorkload("batch", "worker", 12, 11);
    tenant.awaitAvailable("batch", "worker", 12);
    for (String vmi : EVACUATED) uidBefore.put(vmi, world.vmiUid(tenant, vmi));
    recorder = new InvariantRecorder(infra.cluster(), List.of(tenant));
    recorder.startTrackingAvailability();

    List<String> flags =
        new ArrayList<>(
            List.of("--kubeconfig=" + infra.cluster().kubeconfig(), "--drain-timeout=5m"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("crash", infra.cluster().dir(), flags);
    CompletableFuture<Kubectl.Result> drain =
        CompletableFuture.supplyAsync(() -> world.drainInfraNode(drained, Duration.ofMinutes(4)));

    Await.until(
        "a drain start time on an evacuated VMI",
        Duration.ofSeconds(60),
        () -> EVACUATED.stream().anyMatch(v -> !drainStart(v).isBlank()));
    controller.kill();
    for (String vmi : EVACUATED) startSeenBeforeKill.put(vmi, drainStart(vmi));
    Thread.sleep(2000);
    controller.startAgain();
    drainResult = drain.get();
  }

  private static String drainStart(String vmi) {
    return world.vmiField(
        tenant, vmi, ".metadata.annotations.capk\\.cluster\\.x-k8s\\.io/vmi-drain-start-time");
  }

  @AfterAll
  static void stop() {
    Closing.all(controller, recorder, world);
  }

  @Test
  void theEvacuationCompletesAfterTheRestart() {
    assertEquals(0, drainResult.exitCode(), drainResult.stderr() + drainResult.stdout());
    assertEquals(2, controller.starts());
    for (String vmi : EVACUATED) {
      String uid = uidBefore.get(vmi);
      Await.until(
          vmi + " deleted and its deletion checked",
          Duration.ofSeconds(30),
          () -> recorder.drainCheck(uid) != null);
      assertTrue(recorder.drainCheck(uid).drained(), vmi + ": " + recorder.drainCheck(uid));
      // The check runs when the deletion begins (Foreground: deletionTimestamp first); the VMI is
      // gone, and its DELETED event seen, once the garbage collector has removed its dependents.
      Await.until(vmi + " gone", Duration.ofSeconds(30), () -> recorder.deletions(uid) > 0);
      assertEquals(1, recorder.deletions(uid), vmi + " deleted exactly once");
    }
  }

  @Test
  void eachVmiKeptItsOriginalDrainStartTime() {
    for (String vmi : EVACUATED) {
      var starts = recorder.drainStarts(tenant.namespace(), vmi);
      assertEquals(1, starts.size(), vmi + " drain start times seen: " + starts);
      String before = startSeenBeforeKill.get(vmi);
      if (!before.isBlank()) {
        assertEquals(
            before, starts.iterator().next(), vmi + " start time moved across the restart");
      }
    }
  }

  @Test
  void theGuestBudgetWasNeverViolated() {
    int min = recorder.minAvailable(tenant, "batch", "worker");
    assertTrue(min >= 11, "worker had as few as " + min + " available pods, budget 11");
  }
}
