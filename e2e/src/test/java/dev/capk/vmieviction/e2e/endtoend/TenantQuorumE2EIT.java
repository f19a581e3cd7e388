package dev.capk.vmieviction.e2e.endtoend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Closing;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.ScenarioClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.HeldUntilDeadline;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import dev.capk.vmieviction.e2e.scenario.TenantEvents;
import io.kubernetes.client.openapi.models.CoreV1Event;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The control-plane quorum guard as users meet it: `kubectl drain` of an infra node holding a
 * tenant's three control-plane VMIs and two worker VMIs, with PodDisruptionBudget-protected
 * workloads in the guest, the controller running from its jar and the KubeVirt stand-in answering
 * for KubeVirt (a recreated VM's guest node is NotReady until the VM runs again: {@code
 * GuestReboots}). A second tenant, laid out the same on another infra node drained at the same
 * time, has a deadline short enough (its Machines' {@code nodeDrainTimeout: 40s}, Cluster API's
 * contract) that the {@code --drain-reserve} of 20 s lets its held control-plane VMIs go ahead. One
 * controller serves both; the clusters are the end-to-end suite's shared ones.
 */
class TenantQuorumE2EIT {
  @RegisterExtension static final ScenarioClusterExtension infra = E2EClusters.infra();
  @RegisterExtension static final ScenarioClusterExtension guestA = E2EClusters.guestA();
  @RegisterExtension static final ScenarioClusterExtension guestB = E2EClusters.guestB();

  static final List<String> QUORUM_CONTROL_PLANE =
      List.of("quorum-q-cp-0", "quorum-q-cp-1", "quorum-q-cp-2");
  static final List<String> RESERVE_CONTROL_PLANE =
      List.of("quorum-r-cp-0", "quorum-r-cp-1", "quorum-r-cp-2");

  /**
   * The reserve tenant's deadline (its Machines' nodeDrainTimeout) and the controller's reserve.
   */
  static final Duration RESERVE_TENANT_DEADLINE = Duration.ofSeconds(40);

  static final Duration RESERVE = Duration.ofSeconds(20);

  private static EvacuationWorld world;
  private static TenantCluster quorum;
  private static TenantCluster reserve;
  private static InvariantRecorder recorder;
  private static ControllerProcess controller;
  private static Kubectl.Result quorumDrain;
  private static Kubectl.Result reserveDrain;
  private static final Map<String, String> uidBefore = new HashMap<>();

  @BeforeAll
  static void drainBothTenantsInfraNodes() throws Exception {
    world = EvacuationWorld.start(infra.cluster(), "quorum", 3);
    String quorumNode = world.infraNodes().get(0);
    String reserveNode = world.infraNodes().get(1);
    quorum = world.addTenant("q", guestA.cluster());
    reserve = world.addTenant("r", guestB.cluster());
    for (var t : List.of(quorum, reserve)) {
      String node = t == quorum ? quorumNode : reserveNode;
      String p = t.name();
      world.addVmsOn(node, t, "External", true, p + "-cp-0", p + "-cp-1", p + "-cp-2");
      world.addVmsOn(node, t, "External", p + "-w-0", p + "-w-1");
      t.deployProtectedWorkload("quorum", "web", 5, 3);
    }
    for (String vm : reserve.vms()) {
      HeldUntilDeadline.machineDrainTimeout(
          infra.cluster(), reserve.namespace(), vm, RESERVE_TENANT_DEADLINE);
    }
    for (String vm : RESERVE_CONTROL_PLANE) {
      // A pod its budget never lets go: whichever control-plane VMI is admitted first stays under
      // way until its deadline, so the others are still held at deadline minus reserve.
      HeldUntilDeadline.unevictablePod(guestB.cluster(), "quorum-block", vm);
    }
    quorum.awaitAvailable("quorum", "web", 5);
    reserve.awaitAvailable("quorum", "web", 5);
    for (TenantCluster t : List.of(quorum, reserve)) {
      for (String vm : t.vms()) {
        uidBefore.put(vm, world.vmiUid(t, vm));
      }
    }

    recorder = new InvariantRecorder(infra.cluster(), List.of(quorum, reserve));
    recorder.startTrackingAvailability();
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--kubeconfig=" + infra.cluster().kubeconfig(),
                "--drain-timeout=5m",
                "--drain-reserve=" + RESERVE.toSeconds() + "s",
                // A held VMI looks again this often (and the uncordon of a VMI that runs before its
                // guest node is Ready): short, so that the three evacuations follow each other
                // quickly.
                "--drain-retry-interval=2s"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("quorum", infra.cluster().dir(), flags);

    long began = System.nanoTime();
    CompletableFuture<Kubectl.Result> q =
        CompletableFuture.supplyAsync(
            () -> world.drainInfraNode(quorumNode, Duration.ofMinutes(3)));
    CompletableFuture<Kubectl.Result> r =
        CompletableFuture.supplyAsync(
            () -> world.drainInfraNode(reserveNode, Duration.ofMinutes(3)));
    quorumDrain = q.get();
    System.out.printf(
        "e2e: kubectl drain %s (three control-plane VMIs one after another) took %d ms%n",
        quorumNode, (System.nanoTime() - began) / 1_000_000);
    reserveDrain = r.get();
    System.out.printf(
        "e2e: kubectl drain %s (reserve) took %d ms%n",
        reserveNode, (System.nanoTime() - began) / 1_000_000);
  }

  @AfterAll
  static void stop() {
    Closing.all(controller, recorder, world);
  }

  @Test
  void bothInfraDrainsCompleteAndEveryVmiCameBack() {
    assertEquals(0, quorumDrain.exitCode(), quorumDrain.stderr() + quorumDrain.stdout());
    assertEquals(0, reserveDrain.exitCode(), reserveDrain.stderr() + reserveDrain.stdout());
    for (TenantCluster t : List.of(quorum, reserve)) {
      for (String vm : t.vms()) {
        Await.until(
            vm + " recreated",
            Duration.ofSeconds(60),
            () -> {
              String uid = world.vmiUid(t, vm);
              return !uid.isBlank() && !uid.equals(uidBefore.get(vm));
            });
      }
    }
  }

  @Test
  void neverTwoControlPlaneGuestNodesOfTheTenantDownAtOnce() throws Exception {
    String history = recorder.controlPlaneHistory(quorum);
    System.out.println("e2e: control-plane guest nodes down, as watched:\n" + history);
    assertEquals(
        1,
        recorder.maxControlPlaneNodesDown(quorum),
        "control-plane guest nodes down (cordoned or not Ready) at once:\n" + history);
    assertEquals(
        Set.copyOf(QUORUM_CONTROL_PLANE),
        recorder.controlPlaneNodesEverDown(quorum),
        "each control-plane guest node was evacuated (down once), one after another:\n" + history);
    List<CoreV1Event> events = events(quorum);
    assertTrue(
        events.stream()
            .anyMatch(
                e ->
                    "EvacuationHeld".equals(e.getReason())
                        && QUORUM_CONTROL_PLANE.contains(e.getInvolvedObject().getName())),
        "a held control-plane VMI is told what it waits for:\n" + describe(events));
    assertFalse(
        events.stream().anyMatch(e -> "QuorumGuardOverridden".equals(e.getReason())),
        "no override within the 5m deadline:\n" + describe(events));
  }

  @Test
  void everyGuestBudgetHeld() {
    for (TenantCluster t : List.of(quorum, reserve)) {
      int web = recorder.minAvailable(t, "quorum", "web");
      assertTrue(
          web >= 3,
          t.name()
              + ": web had as few as "
              + web
              + " available pods, budget 3: "
              + recorder.minAvailableByWorkload());
    }
  }

  @Test
  void aHeldControlPlaneVmiGoesAheadAtDeadlineMinusReserveWithAWarning() throws Exception {
    List<CoreV1Event> events = events(reserve);
    List<CoreV1Event> overrides =
        events.stream().filter(e -> "QuorumGuardOverridden".equals(e.getReason())).toList();
    assertFalse(overrides.isEmpty(), "an override:\n" + describe(events));
    for (CoreV1Event override : overrides) {
      String vmi = override.getInvolvedObject().getName();
      assertEquals("Warning", override.getType(), describe(events));
      assertTrue(RESERVE_CONTROL_PLANE.contains(vmi), vmi);
      Set<String> starts = recorder.drainStarts(reserve.namespace(), vmi);
      assertEquals(1, starts.size(), vmi + " drain starts: " + starts);
      // The drain start annotation and the event's time are whole seconds; the deadline minus
      // reserve is a whole second too (start + 40s - 20s): ±2 s of it is this window.
      Instant goAhead =
          OffsetDateTime.parse(starts.iterator().next())
              .toInstant()
              .plus(RESERVE_TENANT_DEADLINE)
              .minus(RESERVE);
      Instant at = firstTime(override);
      assertFalse(at.isBefore(goAhead), vmi + ": override at " + at + ", go-ahead " + goAhead);
      assertFalse(
          at.isAfter(goAhead.plusSeconds(2)),
          vmi + ": override at " + at + ", go-ahead " + goAhead);
      assertTrue(
          override.getMessage().contains("still being evacuated"),
          "what was risked: " + override.getMessage());
      assertTrue(
          events.stream()
              .anyMatch(
                  e ->
                      "EvacuationHeld".equals(e.getReason())
                          && vmi.equals(e.getInvolvedObject().getName())
                          && !firstTime(e).isAfter(at)),
          vmi + " was held before:\n" + describe(events));
    }
  }

  private static List<CoreV1Event> events(TenantCluster tenant) throws Exception {
    return TenantEvents.of(infra.cluster(), tenant);
  }

  private static Instant firstTime(CoreV1Event e) {
    return TenantEvents.firstTime(e);
  }

  private static String describe(List<CoreV1Event> events) {
    return events.stream()
        .sorted(Comparator.comparing(TenantQuorumE2EIT::firstTime))
        .map(
            e ->
                firstTime(e)
                    + " "
                    + e.getInvolvedObject().getName()
                    + " "
                    + e.getType()
                    + " "
                    + e.getReason()
                    + ": "
                    + e.getMessage())
        .collect(Collectors.joining("\n"));
  }
}
