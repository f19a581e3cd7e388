package dev.capk.vmieviction.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceSpec;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceStatus;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.ServerPatches;
import dev.capk.vmieviction.kube.LenientJson;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The reconciler's decisions against an in-memory cluster and a scripted drain: no network. */
class NodeMaintenanceReconcilerTest {
  static final OffsetDateTime T0 = OffsetDateTime.of(2025, 1, 1, 12, 0, 0, 0, ZoneOffset.UTC);
  static final PodRef A = new PodRef("ns", "a", "1");
  static final PodRef B = new PodRef("ns", "b", "2");

  final FakeCluster cluster = new FakeCluster();
  final List<String> events = new ArrayList<>();
  static final Instant NOW = Instant.parse("2025-01-01T13:00:00Z");
  final List<Function<DrainOptions, DrainStep>> script = new ArrayList<>();
  final List<DrainOptions> drains = new ArrayList<>();
  final List<String> ended = new ArrayList<>();
  final NodeMaintenanceReconciler.DrainSteps steps =
      new NodeMaintenanceReconciler.DrainSteps() {
        @Override
        public DrainStep step(String name, String node, DrainOptions options) {
          drains.add(options);
          return script.remove(0).apply(options);
        }

        @Override
        public void end(String name) {
          ended.add(name);
        }
      };
  final NodeMaintenanceSettings settings = NodeMaintenanceSettings.defaults();
  final MaintenanceEvents recordedEvents =
      (ref, warning, reason, message) ->
          events.add(
              ("Node".equals(ref.getKind()) ? "node/" : "nm/")
                  + ref.getName()
                  + " "
                  + (warning ? "Warning " : "Normal ")
                  + reason
                  + ": "
                  + message);
  final NodeMaintenanceReconciler reconciler =
      new NodeMaintenanceReconciler(
          cluster.maintenances::get,
          cluster,
          steps,
          recordedEvents,
          settings,
          Clock.fixed(NOW, ZoneOffset.UTC));

  /** A step of a drain that planned {@code planned}: what is still there, and what holds it. */
  static DrainStep step(
      List<PodRef> planned,
      List<PodRef> pending,
      List<PodRef> terminating,
      Map<PodRef, Set<String>> blocking,
      int requests,
      Optional<Instant> nextTry) {
    return new DrainStep(
        pending.isEmpty(),
        planned.size() - pending.size(),
        requests,
        planned,
        pending,
        terminating,
        blocking,
        Map.of(),
        Set.of(),
        Map.of(),
        nextTry,
        Map.of());
  }

  static DrainStep drained(PodRef... planned) {
    return step(List.of(planned), List.of(), List.of(), Map.of(), planned.length, Optional.empty());
  }

  Result reconcile(String name) {
    return reconciler.reconcile(new Request(name));
  }

  @Test
  void aMaintenanceOfAnUnknownNodeIsRefusedAndChangesNothing() {
    cluster.create("nm-x", "no-such-node", 0);
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-x"));
    NodeMaintenance nm = cluster.maintenances.get("nm-x");
    assertEquals("Failed", nm.phase());
    assertEquals(
        "invalid nodeName, no node with name no-such-node found; nothing was changed: delete this"
            + " NodeMaintenance and create one for an existing node",
        nm.getStatus().getLastError());
    assertFalse(Admission.accepted(nm));
    assertTrue(
        events.get(0).startsWith("nm/nm-x Warning NodeNotFound: invalid nodeName"),
        events.toString());
    // Refused for good: a node of that name appearing later does not start it.
    cluster.addNode("no-such-node", false);
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-x"));
    assertEquals(List.of(), cluster.nodePatches);
    assertTrue(drains.isEmpty());
  }

  @Test
  void aSecondMaintenanceOfTheSameNodeIsRefusedAndTheFirstOneGoesOn() {
    cluster.addNode("n1", false);
    cluster.create("first", "n1", 0);
    cluster.create("second", "n1", 5);
    script.add(o -> drained(A));
    reconcile("second");
    assertEquals("Failed", cluster.maintenances.get("second").phase());
    assertTrue(
        cluster
            .maintenances
            .get("second")
            .getStatus()
            .getLastError()
            .startsWith(
                "invalid nodeName, a NodeMaintenance for node n1 already exists: first (created 2025-01-01T12:00:00Z)"));
    assertEquals(List.of(), cluster.nodePatches, "the refused one changed nothing");
    assertTrue(
        events.stream().anyMatch(e -> e.startsWith("nm/second Warning DuplicateMaintenance")));

    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("first"));
    assertEquals("Succeeded", cluster.maintenances.get("first").phase());
    // Deleting the refused one changes nothing either.
    cluster.delete("second");
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("second"));
    assertEquals(1, cluster.nodePatches.size());
  }

  @Test
  void anAcceptedMaintenanceTaintsCordonsDrainsWithTheOperatorsOptionsAndSucceeds() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    script.add(o -> drained(A, B));
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    NodeMaintenance nm = cluster.maintenances.get("nm-a");
    assertTrue(Admission.accepted(nm));
    assertEquals("Succeeded", nm.phase());
    assertEquals(100, nm.getStatus().getDrainProgress());
    assertEquals(2, nm.getStatus().getEvictionPods());
    assertEquals(2, nm.getStatus().getTotalpods());
    assertEquals(null, nm.getStatus().getPendingPods());
    assertTrue(cluster.nodes.get("n1").getAsJsonObject("spec").get("unschedulable").getAsBoolean());
    assertEquals(
        List.of("node.kubernetes.io/unschedulable:NoSchedule", "medik8s.io/drain:NoSchedule"),
        NodePatchesTest.taintStrings(cluster.nodes.get("n1")));
    DrainOptions o = drains.get(0);
    assertTrue(o.force() && o.ignoreAllDaemonSets() && o.deleteEmptyDirData());
    assertEquals(Duration.ofSeconds(30), o.timeout());
    assertTrue(events.stream().anyMatch(e -> e.startsWith("nm/nm-a Normal BeginMaintenance")));
    assertTrue(events.stream().anyMatch(e -> e.startsWith("node/n1 Normal CordonNode")));
    assertTrue(events.stream().anyMatch(e -> e.startsWith("nm/nm-a Normal SucceedMaintenance")));
    assertEquals(List.of("nm-a"), ended, "a drained node is watched no more");
  }

  @Test
  void laterAttemptsOnASucceededMaintenanceDoNotRewriteItsStatusWhenNothingChanged() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    script.add(o -> drained(A));
    reconcile("nm-a");
    int writes = cluster.statusPatches.size();
    script.add(o -> drained());
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    assertEquals(writes, cluster.statusPatches.size(), cluster.statusPatches.toString());
    assertEquals(
        1, events.stream().filter(e -> e.startsWith("nm/nm-a Normal SucceedMaintenance")).count());
    assertEquals(
        1, events.stream().filter(e -> e.startsWith("node/n1 Normal SucceedMaintenance")).count());
  }

  @Test
  void onlyUpdatesThatAreNotOurOwnStatusWritesWakeTheController() {
    NodeMaintenance a =
        new NodeMaintenance()
            .metadata(new V1ObjectMeta().name("a").resourceVersion("1").generation(1L));
    NodeMaintenance statusOnly =
        new NodeMaintenance()
            .metadata(new V1ObjectMeta().name("a").resourceVersion("2").generation(1L));
    NodeMaintenance specChanged =
        new NodeMaintenance()
            .metadata(new V1ObjectMeta().name("a").resourceVersion("3").generation(2L));
    NodeMaintenance deleting =
        new NodeMaintenance()
            .metadata(
                new V1ObjectMeta()
                    .name("a")
                    .resourceVersion("4")
                    .generation(1L)
                    .deletionTimestamp(T0));
    assertFalse(NodeMaintenanceController.worthReconciling(a, statusOnly));
    assertTrue(NodeMaintenanceController.worthReconciling(a, a), "resync");
    assertTrue(NodeMaintenanceController.worthReconciling(a, specChanged));
    assertTrue(NodeMaintenanceController.worthReconciling(a, deleting));
  }

  @Test
  void aBlockedDrainStaysRunningWithThePendingPodsAndTheBudgetThenSucceeds() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    script.add(
        o ->
            step(
                List.of(A, B),
                List.of(B),
                List.of(),
                Map.of(B, Set.of("db")),
                2,
                Optional.of(NOW.plusSeconds(5))));
    Result r = reconcile("nm-a");
    assertEquals(new Result(true, Duration.ofSeconds(5)), r, "back when B is due again");
    NodeMaintenanceStatus st = cluster.maintenances.get("nm-a").getStatus();
    assertEquals("Running", st.getPhase());
    assertEquals(List.of("b"), st.getPendingPods());
    assertEquals(50, st.getDrainProgress());
    assertTrue(st.getLastError().contains("PodDisruptionBudget ns/db"), st.getLastError());

    script.add(o -> drained(B));
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    st = cluster.maintenances.get("nm-a").getStatus();
    assertEquals("Succeeded", st.getPhase());
    assertEquals(2, st.getEvictionPods(), "counted once, at the start");
    assertEquals(null, st.getLastError());
  }

  @Test
  void aStepThatOnlyAwaitsDeletionsIsNoErrorAndAWakeThatChangesNothingWritesNothing() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    script.add(
        o -> step(List.of(A, B), List.of(A, B), List.of(A, B), Map.of(), 2, Optional.empty()));
    Result r = reconcile("nm-a");
    assertEquals(
        new Result(true, settings.maxRetryInterval()),
        r,
        "nothing due: the watch on the node's pods wakes it, the fallback poll is the longest wait");
    NodeMaintenanceStatus st = cluster.maintenances.get("nm-a").getStatus();
    assertEquals("Running", st.getPhase());
    assertEquals(List.of("a", "b"), st.getPendingPods());
    assertEquals(null, st.getLastError(), "pods on their way out are progress, not an error");
    assertFalse(events.stream().anyMatch(e -> e.contains("DrainBlocked")), events.toString());

    // Woken again (another pod left, say) with nothing new: no status write, no event.
    int writes = cluster.statusPatches.size();
    int eventCount = events.size();
    script.add(
        o -> step(List.of(A, B), List.of(A, B), List.of(A, B), Map.of(), 0, Optional.empty()));
    reconcile("nm-a");
    assertEquals(writes, cluster.statusPatches.size(), cluster.statusPatches.toString());
    assertEquals(eventCount, events.size());

    // A leaves: progress is written.
    script.add(o -> step(List.of(A, B), List.of(B), List.of(B), Map.of(), 0, Optional.empty()));
    reconcile("nm-a");
    st = cluster.maintenances.get("nm-a").getStatus();
    assertEquals(List.of("b"), st.getPendingPods());
    assertEquals(50, st.getDrainProgress());
  }

  @Test
  void aBudgetRefusalIsEventedOncePerRefusedAttemptNotPerWake() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    Map<PodRef, Set<String>> db = Map.of(A, Set.of("db"));
    script.add(
        o -> step(List.of(A), List.of(A), List.of(), db, 1, Optional.of(NOW.plusSeconds(5))));
    reconcile("nm-a");
    script.add(
        o -> step(List.of(A), List.of(A), List.of(), db, 0, Optional.of(NOW.plusSeconds(3))));
    assertEquals(new Result(true, Duration.ofSeconds(3)), reconcile("nm-a"));
    script.add(
        o -> step(List.of(A), List.of(A), List.of(), db, 1, Optional.of(NOW.plusSeconds(600))));
    assertEquals(
        new Result(true, settings.maxRetryInterval()),
        reconcile("nm-a"),
        "never later than the longest retry wait");
    assertEquals(2, events.stream().filter(e -> e.contains("Warning DrainBlocked")).count());
    assertTrue(
        cluster
            .maintenances
            .get("nm-a")
            .getStatus()
            .getLastError()
            .contains("ns/a blocked by PodDisruptionBudget ns/db"));
  }

  @Test
  void deletionRestoresTheNodeAndReleasesTheObject() {
    cluster.addNode("n1", false);
    JsonObject before = cluster.nodes.get("n1").deepCopy();
    cluster.create("nm-a", "n1", 0);
    script.add(
        o ->
            step(
                List.of(A),
                List.of(A),
                List.of(),
                Map.of(A, Set.of("db")),
                1,
                Optional.of(NOW.plusSeconds(5))));
    reconcile("nm-a");
    cluster.delete("nm-a");
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    assertFalse(cluster.maintenances.containsKey("nm-a"), "finalizer removed, object gone");
    assertEquals(before.get("spec"), cluster.nodes.get("n1").get("spec"));
    assertEquals(Optional.empty(), NodePatchesTest.mark(cluster.nodes.get("n1")));
    assertTrue(
        events.stream().anyMatch(e -> e.startsWith("node/n1 Normal UncordonNode")),
        events.toString());
    assertEquals(List.of("nm-a"), ended, "the drain mid-way was ended: no watch, no memory");
    assertTrue(script.isEmpty() && drains.size() == 1, "no step after deletion");
  }

  @Test
  void aDeletionWhoseFinalizerSomeoneElseRemovedStillEndsTheDrain() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    script.add(
        o -> step(List.of(A), List.of(A), List.of(), Map.of(), 1, Optional.of(NOW.plusSeconds(5))));
    reconcile("nm-a");
    // Another finalizer holds the object; ours was stripped by hand.
    cluster.maintenances.get("nm-a").getMetadata().finalizers(List.of("example.com/hold"));
    cluster.delete("nm-a");
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    assertEquals(List.of("nm-a"), ended, "no watch outlives the maintenance's deletion");
  }

  @Test
  void aNodeThatDisappearsFailsTheMaintenanceWhichCanStillBeDeleted() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    script.add(o -> drained());
    reconcile("nm-a");
    cluster.nodes.remove("n1");
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    NodeMaintenanceStatus st = cluster.maintenances.get("nm-a").getStatus();
    assertEquals("Failed", st.getPhase());
    assertTrue(
        st.getLastError().startsWith("node n1 not found: it was deleted during maintenance"));
    cluster.delete("nm-a");
    reconcile("nm-a");
    assertFalse(cluster.maintenances.containsKey("nm-a"));
  }

  @Test
  void theDrainAttemptLastsTheSpecsEvictionTimeoutCappedElseTheDefault() {
    NodeMaintenance nm =
        new NodeMaintenance().spec(new NodeMaintenanceSpec().evictionTimeout("90s"));
    assertEquals(Duration.ofSeconds(90), settings.passTimeout(nm));
    nm.getSpec().setEvictionTimeout("5h");
    assertEquals(NodeMaintenanceSettings.MAX_PASS_TIMEOUT, settings.passTimeout(nm));
    nm.getSpec().setEvictionTimeout("0");
    assertEquals(settings.passTimeout(), settings.passTimeout(nm));
    nm.getSpec().setEvictionTimeout("soon");
    assertEquals(settings.passTimeout(), settings.passTimeout(nm));
    nm.getSpec().setEvictionTimeout(" 45s ");
    assertEquals(Duration.ofSeconds(45), settings.passTimeout(nm));
    for (String none : new String[] {"-5s", " ", null}) {
      nm.getSpec().setEvictionTimeout(none);
      assertEquals(settings.passTimeout(), settings.passTimeout(nm), none);
    }
    assertEquals(settings.passTimeout(), settings.passTimeout(new NodeMaintenance()));
  }

  @Test
  void aCacheThatLagsBehindTheSucceededStatusCannotOverwriteItsCounts() {
    cluster.addNode("n1", false);
    cluster.create("nm-s", "n1", 0);
    List<NodeMaintenance> seenDuringDrain = new ArrayList<>();
    script.add(
        o -> {
          seenDuringDrain.add(FakeCluster.copy(cluster.maintenances.get("nm-s")));
          return drained(A, B);
        });
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-s"));
    assertEquals(2, cluster.maintenances.get("nm-s").getStatus().getEvictionPods());
    int patches = cluster.statusPatches.size();
    int eventsBefore = events.size();

    // A node event is handled while the informer still holds the object from before success:
    // accepted, Running, nothing counted. The node is empty now.
    NodeMaintenance stale = seenDuringDrain.get(0);
    assertEquals("Running", stale.phase());
    NodeMaintenanceReconciler lagging =
        new NodeMaintenanceReconciler(
            n -> stale, cluster, steps, recordedEvents, settings, Clock.systemUTC());
    script.add(o -> drained());
    assertEquals(NodeMaintenanceReconciler.DONE, lagging.reconcile(new Request("nm-s")));

    NodeMaintenance after = cluster.maintenances.get("nm-s");
    assertEquals("Succeeded", after.phase());
    assertEquals(
        2, after.getStatus().getEvictionPods(), "the counts of the drain that did the work stay");
    assertEquals(2, after.getStatus().getTotalpods());
    assertEquals(patches, cluster.statusPatches.size(), "nothing to write: it already says so");
    assertEquals(eventsBefore, events.size(), "no second SucceedMaintenance");
  }

  interface ThrowingRunnable {
    void run() throws ApiException;
  }

  @Test
  void aNodeStatusHeartbeatBetweenReadAndWriteDoesNotStopTheWrite() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    cluster.beforeNodePatch.add(
        () ->
            cluster
                .nodes
                .get("n1")
                .getAsJsonObject("metadata")
                .addProperty("resourceVersion", "999"));
    script.add(o -> drained(A));
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    assertEquals("Succeeded", cluster.maintenances.get("nm-a").phase());
    assertEquals(1, cluster.nodePatches.size(), "one write, no conflict");
  }

  @Test
  void aNodeCordonedByOthersBetweenReadAndWriteIsReadAgainAndLeftCordonedAtTheEnd() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    cluster.beforeNodePatch.add(
        () -> cluster.nodes.get("n1").getAsJsonObject("spec").addProperty("unschedulable", true));
    script.add(o -> drained(A));
    assertEquals(NodeMaintenanceReconciler.DONE, reconcile("nm-a"));
    assertEquals("Succeeded", cluster.maintenances.get("nm-a").phase());
    assertEquals(
        Optional.of(false),
        NodePatchesTest.mark(cluster.nodes.get("n1")).map(NodePatches.Mark::cordoned),
        "decided on the node as read again: cordoned before us");
    cluster.delete("nm-a");
    reconcile("nm-a");
    assertTrue(cluster.nodes.get("n1").getAsJsonObject("spec").get("unschedulable").getAsBoolean());
  }

  @Test
  void aRefusedNodeWriteIsNamedInAWarningAndBackedOffNotRetriedAtOnce() {
    cluster.addNode("n1", false);
    cluster.create("nm-a", "n1", 0);
    for (int i = 0; i < 3; i++) {
      cluster.beforeNodePatch.add(
          () -> {
            throw new ApiException(
                "",
                403,
                Map.of(),
                "{\"kind\":\"Status\",\"message\":\"nodes n1 is forbidden\",\"reason\":\"Forbidden\",\"code\":403}");
          });
    }
    List<Duration> delays = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      delays.add(reconcile("nm-a").getRequeueAfter());
    }
    assertEquals(
        List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4)), delays);
    assertEquals(List.of(), cluster.nodePatches);
    assertTrue(drains.isEmpty(), "nothing drained before the node is cordoned");
    assertTrue(
        events.stream()
            .anyMatch(
                e ->
                    e.startsWith("nm/nm-a Warning RequestRefused")
                        && e.contains("tainting and cordoning node n1 refused: HTTP 403")),
        events.toString());
    assertTrue(
        cluster.maintenances.get("nm-a").getStatus().getLastError().contains("refused: HTTP 403"));
  }

  /** Nodes as JSON, patched with the API server's JSON Patch semantics; maintenances as objects. */
  static final class FakeCluster extends MaintenanceCluster {
    final Map<String, JsonObject> nodes = new LinkedHashMap<>();
    final Map<String, NodeMaintenance> maintenances = new LinkedHashMap<>();
    final List<String> nodePatches = new ArrayList<>();
    final List<String> statusPatches = new ArrayList<>();

    /** Runs before the next node patch is applied (someone else's write, an answer). */
    final List<ThrowingRunnable> beforeNodePatch = new ArrayList<>();

    int rv = 100;

    FakeCluster() {
      super(new ApiClient()); // never called: every method is replaced
    }

    void addNode(String name, boolean unschedulable) {
      JsonObject n = NodePatchesTest.node(unschedulable, null, null);
      n.getAsJsonObject("metadata").addProperty("name", name);
      n.getAsJsonObject("metadata").addProperty("resourceVersion", String.valueOf(rv++));
      nodes.put(name, n);
    }

    void create(String name, String node, int second) {
      maintenances.put(
          name,
          new NodeMaintenance()
              .metadata(
                  new V1ObjectMeta()
                      .name(name)
                      .uid("uid-" + name)
                      .creationTimestamp(T0.plusSeconds(second)))
              .spec(new NodeMaintenanceSpec().nodeName(node)));
    }

    void delete(String name) {
      NodeMaintenance nm = maintenances.get(name);
      if (nm.getMetadata().getFinalizers() == null || nm.getMetadata().getFinalizers().isEmpty()) {
        maintenances.remove(name);
      } else {
        nm.getMetadata().setDeletionTimestamp(T0.plusHours(1));
      }
    }

    @Override
    public Optional<V1Node> readNode(String name) {
      return Optional.ofNullable(nodes.get(name)).map(NodePatchesTest::view);
    }

    @Override
    public V1Node patchNode(String name, String jsonPatch) throws ApiException {
      JsonObject n = nodes.get(name);
      if (n == null) {
        throw new ApiException(404, "not found");
      }
      if (!beforeNodePatch.isEmpty()) {
        beforeNodePatch.remove(0).run();
        n = nodes.get(name);
      }
      JsonObject after = ServerPatches.jsonPatch(n, jsonPatch);
      after.getAsJsonObject("metadata").addProperty("resourceVersion", String.valueOf(rv++));
      nodes.put(name, after);
      nodePatches.add(jsonPatch);
      return NodePatchesTest.view(after);
    }

    @Override
    public Optional<NodeMaintenance> readMaintenance(String name) {
      return Optional.ofNullable(maintenances.get(name)).map(FakeCluster::copy);
    }

    static NodeMaintenance copy(NodeMaintenance nm) {
      return LenientJson.GSON.fromJson(LenientJson.GSON.toJson(nm), NodeMaintenance.class);
    }

    @Override
    public List<NodeMaintenance> listMaintenances() {
      return new ArrayList<>(maintenances.values());
    }

    @Override
    public boolean changeFinalizer(String name, boolean add) {
      NodeMaintenance nm = maintenances.get(name);
      if (nm == null || (add && nm.getMetadata().getDeletionTimestamp() != null)) {
        return false;
      }
      List<String> f =
          new ArrayList<>(
              nm.getMetadata().getFinalizers() == null
                  ? List.of()
                  : nm.getMetadata().getFinalizers());
      if (add) {
        f.add(NodeMaintenanceApi.FINALIZER);
      } else if (!f.remove(NodeMaintenanceApi.FINALIZER)) {
        return false;
      }
      nm.getMetadata().setFinalizers(f);
      if (f.isEmpty() && nm.getMetadata().getDeletionTimestamp() != null) {
        maintenances.remove(name);
      }
      return true;
    }

    @Override
    public synchronized void patchStatus(String name, String mergePatch) throws ApiException {
      NodeMaintenance nm = maintenances.get(name);
      if (nm == null) {
        throw new ApiException(404, "not found");
      }
      statusPatches.add(mergePatch);
      JsonObject current =
          JsonParser.parseString(
                  LenientJson.GSON.toJson(
                      nm.getStatus() == null ? new NodeMaintenanceStatus() : nm.getStatus()))
              .getAsJsonObject();
      JsonObject patched =
          ServerPatches.mergePatch(
              current,
              JsonParser.parseString(mergePatch)
                  .getAsJsonObject()
                  .getAsJsonObject("status")
                  .toString());
      nm.setStatus(LenientJson.GSON.fromJson(patched, NodeMaintenanceStatus.class));
    }
  }
}
