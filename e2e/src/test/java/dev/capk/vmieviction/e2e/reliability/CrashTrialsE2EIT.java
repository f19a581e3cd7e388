package dev.capk.vmieviction.e2e.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Crash anywhere: each seeded trial SIGKILLs the controller at a random moment of a multi-VMI,
 * multi-tenant evacuation and starts it again after a random pause. Invariants, from watches: every
 * evacuated VMI is deleted exactly once, only after its guest node was drained (the deadline is far
 * away), no guest budget is ever violated, and no drain start time ever moves. `make test` runs 3
 * trials; `make soak` runs 20 (-Dcapk.crashTrials=N).
 */
class CrashTrialsE2EIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("e2e-infra");

  @RegisterExtension
  static final LocalClusterExtension guestA = LocalClusterExtension.shared("e2e-guest-a");

  @RegisterExtension
  static final LocalClusterExtension guestB = LocalClusterExtension.shared("e2e-guest-b");

  private static EvacuationWorld world;
  private static TenantCluster tenantA;
  private static TenantCluster tenantB;
  private static ControllerProcess controller;

  /** The VMIs that move at every trial, by tenant. */
  private static final Map<String, TenantCluster> MOVING = new LinkedHashMap<>();

  private static int trial;

  static Stream<Long> seeds() {
    int trials = Integer.getInteger("capk.crashTrials", 3);
    long base = Long.getLong("capk.crashSeed", 20261122L);
    return LongStream.range(0, trials).mapToObj(i -> base + i);
  }

  @BeforeAll
  static void world() {
    world = EvacuationWorld.start(infra.cluster(), "trials", 3);
    List<String> nodes = world.infraNodes();
    tenantA = world.addTenant("a", guestA.cluster());
    tenantB = world.addTenant("b", guestB.cluster());
    // Node 2 is never drained: each tenant keeps a guest node there for its pods to go to.
    world.addVmsOn(nodes.get(2), tenantA, "External", "trials-a-anchor");
    world.addVmsOn(nodes.get(2), tenantB, "External", "trials-b-anchor");
    world.addVmsOn(nodes.get(0), tenantA, "External", "trials-a-0", "trials-a-1");
    world.addVmsOn(nodes.get(0), tenantB, "External", "trials-b-0");
    // Cordoned from now on: the anchors keep running there, but moving VMIs go to the other node.
    infra.cluster().kubectl().runOrFail(null, "cordon", nodes.get(2));
    MOVING.put("trials-a-0", tenantA);
    MOVING.put("trials-a-1", tenantA);
    MOVING.put("trials-b-0", tenantB);
    tenantA.deployProtectedWorkload("app", "api", 6, 4);
    tenantB.deployProtectedWorkload("app", "queue", 6, 5);
    List<String> flags =
        new ArrayList<>(
            List.of("--kubeconfig=" + infra.cluster().kubeconfig(), "--drain-timeout=5m"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("trials", infra.cluster().dir(), flags);
  }

  @AfterAll
  static void stop() {
    if (controller != null) controller.close();
    if (world != null) world.close();
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void killedAtARandomMomentTheEvacuationStillKeepsEveryInvariant(long seed) throws Exception {
    Random random = new Random(seed);
    // The moving VMIs alternate between nodes 0 and 1.
    String from = world.infraNodes().get(trial % 2);
    String to = world.infraNodes().get((trial + 1) % 2);
    trial++;
    Kubectl k = infra.cluster().kubectl();
    k.runOrFail(null, "uncordon", to);
    awaitSteadyState(from);
    Map<String, String> uids = new LinkedHashMap<>();
    MOVING.forEach((vmi, t) -> uids.put(vmi, world.vmiUid(t, vmi)));

    long killAfterMs = random.nextInt(8000);
    long downMs = random.nextInt(3000);
    System.out.printf(
        "crash trial seed=%d: drain %s, SIGKILL after %d ms, down %d ms%n",
        seed, from, killAfterMs, downMs);
    try (InvariantRecorder recorder =
        new InvariantRecorder(infra.cluster(), List.of(tenantA, tenantB))) {
      recorder.startTrackingAvailability();
      CompletableFuture<Kubectl.Result> drain =
          CompletableFuture.supplyAsync(() -> world.drainInfraNode(from, Duration.ofMinutes(3)));
      Thread.sleep(killAfterMs);
      controller.kill();
      Thread.sleep(downMs);
      controller.startAgain();
      Kubectl.Result result = drain.get();
      assertEquals(0, result.exitCode(), "seed " + seed + ": infra drain: " + result.stderr());

      for (var e : uids.entrySet()) {
        String vmi = e.getKey();
        String uid = e.getValue();
        Await.until(
            "seed " + seed + ": deletion of " + vmi + " checked",
            Duration.ofSeconds(60),
            () -> recorder.drainCheck(uid) != null);
        assertTrue(
            recorder.drainCheck(uid).drained(),
            "seed " + seed + ": " + vmi + " deleted before drained: " + recorder.drainCheck(uid));
        Await.until(
            "seed " + seed + ": " + vmi + " recreated",
            Duration.ofSeconds(60),
            () -> {
              String now = world.vmiUid(MOVING.get(vmi), vmi);
              return !now.isBlank() && !now.equals(uid);
            });
        assertEquals(
            1, recorder.deletions(uid), "seed " + seed + ": " + vmi + " deleted exactly once");
        assertEquals(
            0,
            recorder.deletions(world.vmiUid(MOVING.get(vmi), vmi)),
            "seed " + seed + ": successor of " + vmi + " deleted");
        assertTrue(
            recorder.drainStarts(MOVING.get(vmi).namespace(), vmi).size() <= 1,
            "seed "
                + seed
                + ": drain start of "
                + vmi
                + " moved: "
                + recorder.drainStarts(MOVING.get(vmi).namespace(), vmi));
      }
      assertTrue(
          recorder.minAvailable(tenantA, "app", "api") >= 4,
          "seed " + seed + ": api budget violated: " + recorder.minAvailableByWorkload());
      assertTrue(
          recorder.minAvailable(tenantB, "app", "queue") >= 5,
          "seed " + seed + ": queue budget violated: " + recorder.minAvailableByWorkload());
    }
  }

  /**
   * Before a trial: the moving VMIs run on {@code node}, every guest node is schedulable, every
   * workload is whole.
   */
  private static void awaitSteadyState(String node) {
    for (var e : MOVING.entrySet()) {
      Await.until(
          e.getKey() + " Running on " + node,
          Duration.ofSeconds(90),
          () ->
              "Running".equals(world.vmiField(e.getValue(), e.getKey(), ".status.phase"))
                  && node.equals(world.vmiField(e.getValue(), e.getKey(), ".status.nodeName")));
      Await.until(
          "guest node " + e.getKey() + " schedulable",
          Duration.ofSeconds(90),
          () ->
              e.getValue()
                  .guest()
                  .kubectl()
                  .run(
                      null,
                      Duration.ofSeconds(10),
                      "get",
                      "node",
                      e.getKey(),
                      "-o",
                      "jsonpath={.spec.unschedulable}")
                  .stdout()
                  .isBlank());
    }
    tenantA.awaitAvailable("app", "api", 6);
    tenantB.awaitAvailable("app", "queue", 6);
  }
}
