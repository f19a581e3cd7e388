package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.label;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.mirror;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.ownedBy;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.unique;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.withEmptyDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.Cordoner.NodeNotFoundException;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.drain.NodeDrainer.Drained;
import dev.capk.vmieviction.drain.PodFilters;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The drain engine against a real control plane: each verdict, budgets, timeouts, dry runs, a large
 * node. Each drain is preceded by a cordon, as the drain command cordons every node first.
 */
class NodeDrainerIT {
  @RegisterExtension
  static final LocalClusterExtension DRAIN = LocalClusterExtension.shared("drain");

  private static DrainFixture fx;
  private static NodeDrainer drainer;
  private static Cordoner cordoner;

  @BeforeAll
  static void setUp() {
    fx = new DrainFixture(DRAIN.cluster());
    drainer = new NodeDrainer(DRAIN.cluster().client());
    cordoner = new Cordoner(new RawApi(DRAIN.cluster().client()));
  }

  /** As the drain command: cordon (in the options' dry-run mode), then drain. */
  private static Drained drain(String node, DrainOptions options, RecordingOutput rec)
      throws Exception {
    cordoner.setUnschedulable(node, true, options.dryRun());
    return drainer.drain(node, options, rec);
  }

  private static Drained drain(String node, DrainOptions options) throws Exception {
    return drain(node, options, new RecordingOutput());
  }

  /** Short retries keep budget tests quick; a timeout keeps a broken test from hanging. */
  private static DrainOptions opts(Consumer<DrainOptions.Builder> more) {
    return DrainOptions.of(
        b -> {
          b.evictionRetryInterval = Duration.ofMillis(200);
          b.timeout = Duration.ofSeconds(90);
          more.accept(b);
        });
  }

  private static DrainOptions opts() {
    return opts(b -> {});
  }

  private record Setup(String node, String ns, V1OwnerReference owner) {}

  private static Setup setup(String prefix) throws ApiException {
    String name = unique(prefix);
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    return new Setup(node, ns, fx.owner(ns));
  }

  private static PodRef ref(V1Pod p) {
    return PodRef.of(p);
  }

  @Test
  void cordonAndUncordonTwiceChangeTheNodeOnlyTheFirstTime() throws Exception {
    String node = fx.nodes(unique("cordon"), 1).get(0);
    assertTrue(cordoner.setUnschedulable(node, true, DryRun.NONE));
    assertTrue(fx.unschedulable(node));
    assertFalse(cordoner.setUnschedulable(node, true, DryRun.NONE));
    assertTrue(fx.unschedulable(node));
    assertTrue(cordoner.setUnschedulable(node, false, DryRun.NONE));
    assertFalse(fx.unschedulable(node));
    assertFalse(cordoner.setUnschedulable(node, false, DryRun.NONE));
    assertFalse(fx.unschedulable(node));
    // Nothing but spec.unschedulable changed: kwok still keeps the node Ready with its labels.
    assertEquals(
        node,
        fx.core.readNode(node).execute().getMetadata().getLabels().get("kubernetes.io/hostname"));
  }

  @Test
  void anUnknownNodeIsAClearError() {
    for (ThrowingCall call :
        List.<ThrowingCall>of(
            () -> cordoner.setUnschedulable("no-such-node", true, DryRun.NONE),
            () -> cordoner.setUnschedulable("no-such-node", false, DryRun.NONE))) {
      NodeNotFoundException e = assertThrows(NodeNotFoundException.class, call::run);
      assertEquals("node \"no-such-node\" not found", e.getMessage());
      assertEquals(404, e.getCode());
    }
  }

  private interface ThrowingCall {
    void run() throws Exception;
  }

  @Test
  void managedPodsAreEvictedAndTheNodeIsLeftCordonedAndEmpty() throws Exception {
    Setup s = setup("managed");
    fx.pods(s.ns, s.node, "web", 3, ownedBy(s.owner));
    fx.awaitRunning(s.ns, 3);
    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(s.node, opts(), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(3, r.evicted().size());
    assertTrue(fx.podsOn(s.node).isEmpty());
    assertTrue(fx.unschedulable(s.node));
    for (PodRef p : r.evicted()) {
      assertEquals(List.of("evicting", "evicted"), rec.eventsFor(p), "callbacks of " + p);
    }
    assertEquals("node/" + s.node + " drained", rec.lines().get(rec.lines().size() - 1));
  }

  @Test
  void daemonSetPodsRefuseTheDrainUnlessIgnoredThenStay() throws Exception {
    Setup s = setup("ds");
    fx.daemonSet(s.ns, "agent", s.node);
    V1Pod web = fx.pod(s.ns, s.node, "web", ownedBy(s.owner));
    DrainRefusedException refused =
        assertThrows(DrainRefusedException.class, () -> drain(s.node, opts()));
    assertEquals(
        Set.of("cannot delete " + PodFilters.DAEMONSET_FATAL), refused.refusals().keySet());
    assertEquals(1, refused.refusedPods().size());
    assertTrue(refused.refusedPods().get(0).name().startsWith("agent-"));
    assertTrue(
        fx.podsOn(s.node).containsKey(web.getMetadata().getUid()), "nothing evicted when refused");
    assertTrue(fx.unschedulable(s.node), "kubectl leaves a refused node cordoned too");

    RecordingOutput rec = new RecordingOutput();
    assertFalse(cordoner.setUnschedulable(s.node, true, DryRun.NONE), "cordoned already");
    Drained r = drainer.drain(s.node, opts(b -> b.ignoreAllDaemonSets = true), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(web)), r.evicted());
    assertEquals(1, rec.warnings().size(), rec.lines().toString());
    assertTrue(
        rec.warnings().get(0).startsWith("ignoring DaemonSet-managed Pods: " + s.ns + "/agent-"),
        rec.lines().toString());
    assertEquals(Set.of("agent"), DrainFixture.roles(fx.podsOn(s.node).values()));
  }

  @Test
  void mirrorPodsAreSkipped() throws Exception {
    Setup s = setup("mirror");
    V1Pod staticPod = fx.pod(s.ns, s.node, "static", mirror());
    V1Pod web = fx.pod(s.ns, s.node, "web", ownedBy(s.owner));
    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(s.node, opts(), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(web)), r.evicted());
    assertTrue(
        rec.lines().stream().noneMatch(l -> l.contains("static")),
        "kubectl says nothing of mirror pods: " + rec.lines());
    assertEquals(Set.of("static"), DrainFixture.roles(fx.podsOn(s.node).values()));
  }

  @Test
  void emptyDirPodsRefuseUnlessTheirDataMayBeDeleted() throws Exception {
    Setup s = setup("emptydir");
    V1Pod cache = fx.pod(s.ns, s.node, "cache", ownedBy(s.owner), withEmptyDir());
    DrainRefusedException refused =
        assertThrows(DrainRefusedException.class, () -> drain(s.node, opts()));
    assertEquals(
        Map.of("cannot delete " + PodFilters.LOCAL_STORAGE_FATAL, List.of(ref(cache))),
        refused.refusals());
    assertEquals(1, fx.podsOn(s.node).size());

    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(s.node, opts(b -> b.deleteEmptyDirData = true), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(cache)), r.evicted());
    assertEquals(List.of(), rec.warnings(), "kubectl 1.35 warns of no local storage either");
  }

  @Test
  void podsWithoutAControllerRefuseUnlessForced() throws Exception {
    Setup s = setup("bare");
    V1Pod bare = fx.pod(s.ns, s.node, "bare");
    DrainRefusedException refused =
        assertThrows(DrainRefusedException.class, () -> drain(s.node, opts()));
    assertEquals(Map.of(PodFilters.UNMANAGED_FATAL, List.of(ref(bare))), refused.refusals());
    assertTrue(refused.getMessage().contains(s.ns + "/bare"), refused.getMessage());

    Drained r = drain(s.node, opts(b -> b.force = true));
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(bare)), r.evicted());
  }

  @Test
  void finishedPodsAreDeletedWithoutAnyFlag() throws Exception {
    Setup s = setup("finished");
    V1Pod done = fx.pod(s.ns, s.node, "done", withEmptyDir());
    fx.awaitRunning(s.ns, 1);
    fx.finish(s.ns, "done", "Succeeded");
    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(s.node, opts(), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(done)), r.evicted());
    assertTrue(rec.warnings().isEmpty(), rec.lines().toString());
  }

  @Test
  void podsBeingDeletedForLongerThanSkipWaitAreSkippedAndNotWaitedFor() throws Exception {
    String name = unique("ghost");
    String node = fx.ghostNode(name);
    String ns = fx.namespace(name);
    V1OwnerReference owner = fx.owner(ns);
    V1Pod old = fx.pod(ns, node, "old", ownedBy(owner));
    V1Pod fresh = fx.pod(ns, node, "fresh", ownedBy(owner));
    // No kubelet serves this node: a graceful deletion starts and never completes.
    fx.deleteGracefully(ns, "old", 1);
    Await.until(
        "old's deletion to be over 1s past its deadline",
        Duration.ofSeconds(30),
        () -> {
          V1Pod p = fx.core.readNamespacedPod("old", ns).execute();
          return p.getMetadata()
              .getDeletionTimestamp()
              .toInstant()
              .plusSeconds(2)
              .isBefore(java.time.Instant.now());
        });
    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(node, opts(b -> b.skipWaitForDeleteTimeout = Duration.ofSeconds(1)), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertTrue(r.evicted().isEmpty(), "nothing actually went: " + r.toString());
    // old was being deleted too long already at the plan (skipped silently, as kubectl does);
    // fresh was evicted and became so while waited for.
    assertTrue(rec.lines().stream().noneMatch(l -> l.contains("\"old\"")), rec.lines().toString());
    assertTrue(
        rec.lines()
            .contains(
                "pod \"fresh\" deletion timestamp older than 1 seconds, not waited for, skipping"),
        rec.lines().toString());
  }

  @Test
  void thePodSelectorLimitsTheDrainToMatchingPods() throws Exception {
    Setup s = setup("selector");
    V1Pod a = fx.pod(s.ns, s.node, "a", ownedBy(s.owner), label("tier", "front"));
    fx.pod(s.ns, s.node, "b", ownedBy(s.owner), label("tier", "back"));
    fx.pod(s.ns, s.node, "c");
    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(s.node, opts(b -> b.podSelector = "tier in (front)"), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(a)), r.evicted());
    assertEquals(
        List.of("evicting pod " + ref(a), "pod/a evicted", "node/" + s.node + " drained"),
        rec.lines(),
        "unselected pods are not the drain's business");
    assertEquals(Set.of("b", "c"), DrainFixture.roles(fx.podsOn(s.node).values()));
  }

  @Test
  void anInvalidSelectorIsRefusedBeforeAnythingChanges() throws Exception {
    String node = fx.nodes(unique("badsel"), 1).get(0);
    assertThrows(
        IllegalArgumentException.class,
        () -> drain(node, opts(b -> b.podSelector = "tier in (front")));
    assertFalse(fx.unschedulable(node));
  }

  @Test
  void aBudgetBlocksUntilTheDeploymentIsScaledUpThenTheDrainCompletes() throws Exception {
    String name = unique("pdb");
    List<String> nodes = fx.nodes(name, 2);
    String x = nodes.get(0);
    String y = nodes.get(1);
    String ns = fx.namespace(name);
    // Both replicas on x: keep y cordoned while the Deployment starts.
    cordoner.setUnschedulable(y, true, DryRun.NONE);
    fx.cluster.kubectl().apply(deployment(ns, "web", 2, y.replaceAll("-[0-9]+$", "")));
    fx.awaitRunning(ns, 2);
    cordoner.setUnschedulable(y, false, DryRun.NONE);
    fx.budget(ns, "web", 2, Map.of("app", "web"), 2);
    Map<String, V1Pod> before = fx.podsOn(x);
    assertEquals(2, before.size());

    RecordingOutput rec = new RecordingOutput();
    CompletableFuture<Drained> drain =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return drain(x, opts(), rec);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    assertTrue(
        rec.firstBlock.await(60, TimeUnit.SECONDS), "an eviction was blocked: " + rec.lines());
    assertEquals(Set.of("web"), rec.lastBudgets);
    assertFalse(drain.isDone());

    fx.cluster.kubectl().runOrFail(null, "-n", ns, "scale", "deployment", "web", "--replicas=3");
    Drained r = drain.get(90, TimeUnit.SECONDS);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(before.values().stream().map(PodRef::of).sorted().toList(), r.evicted());
    assertTrue(fx.podsOn(x).isEmpty());
  }

  @Test
  void aTimeoutReportsThePendingPodsAndTheBudgetsThatBlockThem() throws Exception {
    Setup s = setup("timeout");
    V1Pod db = fx.pod(s.ns, s.node, "db", ownedBy(s.owner), label("app", "db"));
    V1Pod web = fx.pod(s.ns, s.node, "web", ownedBy(s.owner));
    fx.awaitRunning(s.ns, 2);
    fx.budget(s.ns, "db-budget", 1, Map.of("app", "db"), 1);
    RecordingOutput rec = new RecordingOutput();
    // Long enough for the budget's first refusal to come back on a loaded machine.
    Drained r = drain(s.node, opts(b -> b.timeout = Duration.ofSeconds(15)), rec);
    assertFalse(r.error().isEmpty());
    assertTrue(r.error().orElseThrow().endsWith("global timeout reached: 15s"), r.toString());
    assertEquals(List.of(ref(web)), r.evicted());
    List<String> lines = rec.lines();
    assertEquals(
        List.of(
            "err: There are pending pods in node \""
                + s.node
                + "\" when an error occurred: "
                + r.error().orElseThrow(),
            "err: pod/db -n " + s.ns + " (blocked by PodDisruptionBudget db-budget)"),
        lines.subList(lines.size() - 2, lines.size()));
    assertTrue(fx.podsOn(s.node).containsKey(db.getMetadata().getUid()));
  }

  @Test
  void aStatefulSetPodRecreatedUnderTheSameNameCountsAsEvicted() throws Exception {
    String name = unique("sts");
    List<String> nodes = fx.nodes(name, 2);
    String x = nodes.get(0);
    String y = nodes.get(1);
    String ns = fx.namespace(name);
    cordoner.setUnschedulable(y, true, DryRun.NONE);
    fx.cluster.kubectl().apply(statefulSet(ns, "db", name));
    fx.awaitRunning(ns, 1);
    cordoner.setUnschedulable(y, false, DryRun.NONE);
    V1Pod original = fx.core.readNamespacedPod("db-0", ns).execute();
    assertEquals(x, original.getSpec().getNodeName());

    Drained r = drain(x, opts());
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(original)), r.evicted());
    Await.until(
        "db-0 recreated",
        Duration.ofSeconds(60),
        () -> {
          try {
            return !fx.core
                .readNamespacedPod("db-0", ns)
                .execute()
                .getMetadata()
                .getUid()
                .equals(original.getMetadata().getUid());
          } catch (ApiException e) {
            return false;
          }
        });
    V1Pod again = fx.core.readNamespacedPod("db-0", ns).execute();
    assertNotEquals(original.getMetadata().getUid(), again.getMetadata().getUid());
  }

  @Test
  void aServerDryRunChangesNothing() throws Exception {
    Setup s = setup("dryrun");
    fx.pods(s.ns, s.node, "web", 2, ownedBy(s.owner));
    fx.pod(s.ns, s.node, "bare");
    fx.awaitRunning(s.ns, 3);
    Map<String, V1Pod> before = fx.podsOn(s.node);
    for (DryRun mode : List.of(DryRun.SERVER, DryRun.CLIENT)) {
      RecordingOutput rec = new RecordingOutput();
      assertTrue(cordoner.setUnschedulable(s.node, true, mode), "would cordon");
      Drained r =
          drainer.drain(
              s.node,
              opts(
                  b -> {
                    b.force = true;
                    b.dryRun = mode;
                  }),
              rec);
      assertTrue(r.error().isEmpty(), r.toString());
      assertEquals(3, r.evicted().size(), "the pods that would go: " + r.toString());
      assertFalse(fx.unschedulable(s.node), mode + " did not cordon");
      assertEquals(before.keySet(), fx.podsOn(s.node).keySet(), mode + " evicted nothing");
      assertTrue(
          rec.lines().stream().noneMatch(e -> e.endsWith(" evicted")), rec.lines().toString());
    }
  }

  @Test
  void withEvictionDisabledPodsAreDeletedDespiteABudget() throws Exception {
    Setup s = setup("noevict");
    fx.pods(s.ns, s.node, "db", 2, ownedBy(s.owner), label("app", "db"));
    fx.awaitRunning(s.ns, 2);
    fx.budget(s.ns, "db", 2, Map.of("app", "db"), 2);
    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(s.node, opts(b -> b.disableEviction = true), rec);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(2, r.evicted().size());
    assertTrue(fx.podsOn(s.node).isEmpty());
    assertTrue(rec.lines().stream().anyMatch(e -> e.endsWith(" deleted")), rec.lines().toString());
    assertTrue(
        rec.lines().stream().noneMatch(e -> e.startsWith("evicting ")),
        "kubectl announces no deletion: " + rec.lines());
  }

  @Test
  void aPodUnderTwoBudgetsFailsNamingThePodWhileTheOthersGo() throws Exception {
    Setup s = setup("twopdb");
    V1Pod db = fx.pod(s.ns, s.node, "db", ownedBy(s.owner), label("app", "db"));
    V1Pod web = fx.pod(s.ns, s.node, "web", ownedBy(s.owner));
    fx.awaitRunning(s.ns, 2);
    fx.budget(s.ns, "one", 0, Map.of("app", "db"), 1);
    fx.budget(s.ns, "two", 0, Map.of(DrainFixture.ROLE, "db"), 1);
    RecordingOutput rec = new RecordingOutput();
    Drained r = drain(s.node, opts(), rec);
    assertEquals(Optional.of("some pods could not be evicted"), r.error(), "not timed out");
    assertEquals(List.of(ref(web)), r.evicted());
    String failed = rec.lines().get(rec.lines().size() - 1);
    assertTrue(failed.startsWith("err: failed: pod/db -n " + s.ns + ": "), failed);
    assertTrue(failed.contains("more than one PodDisruptionBudget"), failed);
  }

  @Test
  void aNodeWithFiveHundredPodsIsDrainedCompletely() throws Exception {
    Setup s = setup("big");
    fx.pods(s.ns, s.node, "p", 500, ownedBy(s.owner));
    fx.awaitRunning(s.ns, 500);
    Drained r =
        drain(
            s.node,
            opts(
                b -> {
                  b.timeout = Duration.ofMinutes(3);
                  b.chunkSize = 100;
                }));
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(500, r.evicted().size());
    assertTrue(fx.podsOn(s.node).isEmpty());
  }

  @Test
  void aDrainRidesOutAnApiServerRestart() throws Exception {
    Setup s = setup("outage");
    V1Pod db = fx.pod(s.ns, s.node, "db", ownedBy(s.owner), label("app", "db"));
    fx.awaitRunning(s.ns, 1);
    fx.budget(s.ns, "db", 1, Map.of("app", "db"), 1);
    RecordingOutput rec = new RecordingOutput();
    CompletableFuture<Drained> drain =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return drain(s.node, opts(), rec);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    assertTrue(rec.firstBlock.await(60, TimeUnit.SECONDS), rec.lines().toString());
    fx.cluster.restartApiServer(Duration.ofSeconds(2));
    fx.policy.deleteNamespacedPodDisruptionBudget("db", s.ns).execute();
    Drained r = drain.get(90, TimeUnit.SECONDS);
    assertTrue(r.error().isEmpty(), r.toString());
    assertEquals(List.of(ref(db)), r.evicted());
  }

  static String deployment(String ns, String app, int replicas, String nodePrefix) {
    return """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: %2$s, namespace: %1$s}
                spec:
                  replicas: %3$d
                  selector: {matchLabels: {app: %2$s}}
                  template:
                    metadata: {labels: {app: %2$s}}
                    spec:
                      terminationGracePeriodSeconds: 1
                      affinity:
                        nodeAffinity:
                          requiredDuringSchedulingIgnoredDuringExecution:
                            nodeSelectorTerms:
                            - matchExpressions:
                              - {key: kubernetes.io/hostname, operator: In, values: [%4$s-0, %4$s-1]}
                      containers: [{name: main, image: fake/%2$s:1}]
                """
        .formatted(ns, app, replicas, nodePrefix);
  }

  static String statefulSet(String ns, String app, String nodePrefix) {
    return """
                apiVersion: apps/v1
                kind: StatefulSet
                metadata: {name: %2$s, namespace: %1$s}
                spec:
                  replicas: 1
                  serviceName: %2$s
                  selector: {matchLabels: {app: %2$s}}
                  template:
                    metadata: {labels: {app: %2$s}}
                    spec:
                      terminationGracePeriodSeconds: 1
                      affinity:
                        nodeAffinity:
                          requiredDuringSchedulingIgnoredDuringExecution:
                            nodeSelectorTerms:
                            - matchExpressions:
                              - {key: kubernetes.io/hostname, operator: In, values: [%3$s-0, %3$s-1]}
                      containers: [{name: main, image: fake/%2$s:1}]
                """
        .formatted(ns, app, nodePrefix);
  }
}
