package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.label;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.ownedBy;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SteppedDrains;
import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.NodePodWatch;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The drain engine's steps against a real control plane: a step sends what is due and returns,
 * whatever a budget says, and the node's pod watch reports pods leaving.
 */
class DrainStepperIT {
  @RegisterExtension
  static final LocalClusterExtension DRAIN = LocalClusterExtension.shared("drain");

  private static DrainFixture fx;
  private static ExecutorService evictions;
  private static SteppedDrains stepper;

  @BeforeAll
  static void setUp() {
    fx = new DrainFixture(DRAIN.cluster());
    // As SteppedDrains sends them: a virtual thread per eviction.
    evictions = Executors.newVirtualThreadPerTaskExecutor();
    stepper =
        new SteppedDrains(
            evictions, Clock.systemUTC(), Duration.ofSeconds(5), Duration.ofSeconds(20));
  }

  @AfterAll
  static void tearDown() {
    evictions.shutdownNow();
  }

  static DrainOptions options() {
    return DrainOptions.of(b -> b.timeout = Duration.ofSeconds(20));
  }

  static List<V1Pod> podsOf(String node) throws Exception {
    return new ArrayList<>(fx.podsOn(node).values());
  }

  @Test
  void aStepEvictsWhatMayGoAndReturnsWhileABudgetRefusesTheRestUntilTheirTurnComes()
      throws Exception {
    String name = unique("step");
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    V1OwnerReference owner = fx.owner(ns);
    V1Pod db = fx.pod(ns, node, "db", ownedBy(owner), label("app", "db"));
    V1Pod web = fx.pod(ns, node, "web", ownedBy(owner));
    fx.awaitRunning(ns, 2);
    fx.budget(ns, "db-budget", 1, Map.of("app", "db"), 1);
    DrainMemory memory = new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(20));

    DrainStep first =
        stepper.step(
            DRAIN.cluster().client(), node, podsOf(node), options(), memory, BudgetWatch.NONE);

    assertFalse(first.complete());
    assertEquals(2, first.requests(), "one eviction per pod, sent in the same step");
    assertEquals(Map.of(PodRef.of(db), Set.of("db-budget")), first.blockingBudgets());
    assertTrue(first.nextTry().isPresent(), "the refused pod is due again later");
    assertTrue(fx.podsOn(node).containsKey(db.getMetadata().getUid()), "the budget held db");
    Await.until(
        "web evicted",
        Duration.ofSeconds(60),
        () -> !fx.podsOn(node).containsKey(web.getMetadata().getUid()));

    // Before db is due again, a step sends nothing.
    DrainStep early =
        stepper.step(
            DRAIN.cluster().client(), node, podsOf(node), options(), memory, BudgetWatch.NONE);
    assertEquals(0, early.requests());
    assertEquals(first.nextTry(), early.nextTry());
    assertEquals(List.of(PodRef.of(db)), early.pending());
  }

  @Test
  void aDrainWithNothingLeftIsCompleteAtItsFirstStep() throws Exception {
    String name = unique("empty");
    String node = fx.nodes(name, 1).get(0);

    DrainStep step =
        stepper.step(
            DRAIN.cluster().client(),
            node,
            podsOf(node),
            options(),
            new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(20)),
            BudgetWatch.NONE);

    assertTrue(step.complete());
    assertEquals(0, step.requests());
  }

  @Test
  void theNodesPodWatchSeesEvictedPodsLeaveAndCallsBack() throws Exception {
    String name = unique("watch");
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    V1OwnerReference owner = fx.owner(ns);
    fx.pod(ns, node, "a", ownedBy(owner));
    fx.pod(ns, node, "b", ownedBy(owner));
    fx.awaitRunning(ns, 2);
    AtomicInteger calls = new AtomicInteger();
    try (NodePodWatch watch =
        NodePodWatch.start(DRAIN.cluster().client(), node, calls::incrementAndGet)) {
      Await.until(
          "the watch listed the node's pods",
          Duration.ofSeconds(30),
          () -> watch.pods().map(List::size).orElse(0) == 2);
      int before = calls.get();
      DrainMemory memory = new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(20));

      DrainStep step =
          stepper.step(
              DRAIN.cluster().client(),
              node,
              watch.pods().orElseThrow(),
              options(),
              memory,
              BudgetWatch.NONE);
      assertEquals(2, step.requests());

      Await.until(
          "the watch saw both pods leave",
          Duration.ofSeconds(60),
          () -> watch.pods().map(List::isEmpty).orElse(false));
      assertTrue(calls.get() > before, "pods leaving called back");
      assertTrue(
          stepper
              .step(
                  DRAIN.cluster().client(),
                  node,
                  watch.pods().orElseThrow(),
                  options(),
                  memory,
                  BudgetWatch.NONE)
              .complete());
    }
  }

  /**
   * An eviction the API server approved but did not carry out (its client went away between the
   * budget's record and the deletion): the budget counts the pod as gone for two minutes and
   * refuses everything else meanwhile. A step refused by that budget deletes the recorded pod at
   * once, and still leaves the pod the budget protects.
   */
  @Test
  void aPodTheBudgetRecordsAsEvictedButStillRunsIsDeletedAndTheProtectedPodStays()
      throws Exception {
    String name = unique("stranded");
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    V1OwnerReference owner = fx.owner(ns);
    V1Pod stranded = fx.pod(ns, node, "web-a", ownedBy(owner), label("app", "web"));
    V1Pod kept = fx.pod(ns, node, "web-b", ownedBy(owner), label("app", "web"));
    fx.awaitRunning(ns, 2);
    fx.budget(ns, "web-budget", 1, Map.of("app", "web"), 2);
    // What the eviction subresource writes before it deletes the pod; its deletion never came.
    Instant created = stranded.getMetadata().getCreationTimestamp().toInstant();
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    Instant recorded = now.isAfter(created) ? now : created.plusSeconds(1);
    DRAIN
        .cluster()
        .kubectl()
        .runOrFail(
            null,
            "-n",
            ns,
            "patch",
            "pdb",
            "web-budget",
            "--subresource=status",
            "--type=merge",
            "-p",
            "{\"status\":{\"disruptedPods\":{\"web-a\":\"" + recorded + "\"}}}");
    PolicyV1Api policy = new PolicyV1Api(DRAIN.cluster().client());
    Await.until(
        "the budget counts web-a as disrupted and allows nothing",
        Duration.ofSeconds(30),
        () -> {
          V1PodDisruptionBudget b =
              policy.readNamespacedPodDisruptionBudget("web-budget", ns).execute();
          return b.getStatus().getDisruptedPods() != null
              && b.getStatus().getDisruptedPods().containsKey("web-a")
              && b.getStatus().getDisruptionsAllowed() == 0
              && b.getStatus().getCurrentHealthy() == 1;
        });

    DrainStep step;
    // The controller's drains watch the budgets that refuse them; the watch's copy is what says
    // the budget is worth a read.
    try (BudgetWatch budgets = BudgetWatch.start(DRAIN.cluster().client(), name, b -> {})) {
      budgets.follow(List.of(ns + "/web-budget"));
      Await.until(
          "the budget watch sees the record",
          Duration.ofSeconds(30),
          () ->
              budgets
                  .lastSeen(ns + "/web-budget")
                  .map(b -> b.getStatus().getDisruptedPods())
                  .filter(p -> p.containsKey("web-a"))
                  .isPresent());
      // A record of the last seconds may be an eviction under way: this one is older.
      Thread.sleep(
          Math.max(0, Duration.between(Instant.now(), recorded.plusSeconds(6)).toMillis()));

      step =
          stepper.step(
              DRAIN.cluster().client(),
              node,
              podsOf(node),
              options(),
              new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(20)),
              budgets);
    }

    // Named as the budget watch knows it (namespace/name).
    assertEquals(Map.of(PodRef.of(kept), Set.of(ns + "/web-budget")), step.blockingBudgets());
    Await.until(
        "web-a deleted",
        Duration.ofSeconds(30),
        () -> !fx.podsOn(node).containsKey(stranded.getMetadata().getUid()));
    assertTrue(
        fx.podsOn(node).containsKey(kept.getMetadata().getUid()), "the budget still holds web-b");
  }
}
