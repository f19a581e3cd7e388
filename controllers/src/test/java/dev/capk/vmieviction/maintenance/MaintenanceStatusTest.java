package dev.capk.vmieviction.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceStatus;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.PodRef;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MaintenanceStatusTest {
  static final PodRef A = new PodRef("ns", "a", "1");
  static final PodRef B = new PodRef("ns", "b", "2");
  static final PodRef C = new PodRef("ns", "c", "3");
  static final PodRef DS = new PodRef("kube-system", "agent", "4");

  static DrainStep step(
      List<PodRef> planned,
      List<PodRef> pending,
      List<PodRef> terminating,
      Map<PodRef, Set<String>> blocking,
      Map<PodRef, String> failed,
      Map<PodRef, String> skipped) {
    return new DrainStep(
        pending.isEmpty(),
        planned.size() - pending.size(),
        0,
        planned,
        pending,
        terminating,
        blocking,
        failed,
        Set.of(),
        skipped,
        Optional.empty(),
        Map.of());
  }

  /** The status as it holds counts, before a step. */
  static MaintenanceStatus.Snapshot counted(int evictionPods, int totalPods) {
    return new MaintenanceStatus.Snapshot(evictionPods, totalPods, List.of(), 0, null);
  }

  /** The status after {@code step}, from the counts of {@code before}. */
  static MaintenanceStatus.Snapshot after(MaintenanceStatus.Snapshot before, DrainStep step) {
    return MaintenanceStatus.after(
        new NodeMaintenanceStatus()
            .evictionPods(before.evictionPods())
            .totalpods(before.totalPods()),
        step);
  }

  @Test
  void theFirstPlanCountsThePodsAndProgressFollowsEachPodThatGoes() {
    MaintenanceStatus.Snapshot p = counted(0, 0);
    List<PodRef> all = List.of(A, B, C);
    Map<PodRef, String> ds = Map.of(DS, "DaemonSet-managed");
    p = after(p, step(all, all, List.of(), Map.of(), Map.of(), ds));
    MaintenanceStatus.Snapshot s = p;
    assertEquals(3, s.evictionPods());
    assertEquals(4, s.totalPods());
    assertEquals(List.of("a", "b", "c"), s.pendingPods());
    assertEquals(0, s.percent());
    p = after(p, step(all, List.of(B, C), List.of(B, C), Map.of(), Map.of(), ds));
    assertEquals(33, p.percent());
    p = after(p, step(List.of(), List.of(), List.of(), Map.of(), Map.of(), ds));
    assertEquals(100, p.percent());
    assertEquals(List.of(), p.pendingPods());
    assertEquals(3, p.evictionPods(), "counted once");
  }

  @Test
  void countsFromTheStatusSurviveARestartAndLaterPlansDoNotRecount() {
    MaintenanceStatus.Snapshot p = counted(4, 6);
    p = after(p, step(List.of(C), List.of(C), List.of(), Map.of(), Map.of(), Map.of()));
    assertEquals(4, p.evictionPods());
    assertEquals(6, p.totalPods());
    assertEquals(75, p.percent());
  }

  @Test
  void progressStaysWithinBoundsAndNeverReadsDoneWhilePodsArePending() {
    assertEquals(100, MaintenanceStatus.percent(0, 0));
    assertEquals(0, MaintenanceStatus.percent(0, 2));
    assertEquals(0, MaintenanceStatus.percent(2, 5), "more pods arrived than were counted");
    assertEquals(99, MaintenanceStatus.percent(1000, 1));
  }

  @Test
  void aBlockedEvictionNamesEachPodLeftAndWhatHoldsIt() {
    MaintenanceStatus.Snapshot p = counted(0, 0);
    p =
        after(
            p,
            step(
                List.of(A, B, C),
                List.of(B, C),
                List.of(C),
                Map.of(B, Set.of("db")),
                Map.of(),
                Map.of()));
    MaintenanceStatus.Snapshot s = p;
    assertEquals(List.of("b", "c"), s.pendingPods());
    assertEquals(33, s.percent());
    assertEquals(
        "not all pods evicted: 2 left (ns/b blocked by PodDisruptionBudget ns/db; ns/c still"
            + " terminating); retrying",
        s.lastError());
    p = after(p, step(List.of(B), List.of(B), List.of(), Map.of(B, Set.of()), Map.of(), Map.of()));
    assertTrue(p.lastError().contains("a PodDisruptionBudget"));

    p = after(p, step(List.of(), List.of(), List.of(), Map.of(), Map.of(), Map.of()));
    assertEquals(List.of(), p.pendingPods());
    assertNull(p.lastError());
  }

  @Test
  void podsOnlyOnTheirWayOutAreNoError() {
    MaintenanceStatus.Snapshot p = counted(0, 0);
    p = after(p, step(List.of(A, B), List.of(A, B), List.of(A), Map.of(), Map.of(), Map.of()));
    assertNull(p.lastError());
  }

  @Test
  void failuresAreNamedToo() {
    MaintenanceStatus.Snapshot p = counted(0, 0);
    p =
        after(
            p,
            step(
                List.of(A),
                List.of(A),
                List.of(),
                Map.of(),
                Map.of(A, "more than one PodDisruptionBudget"),
                Map.of()));
    assertEquals(
        "not all pods evicted: 1 left (ns/a cannot be evicted: more than one PodDisruptionBudget);"
            + " retrying",
        p.lastError());
  }

  @Test
  void theStatusPatchSetsWhatChangesAndRemovesWhatIsOver() {
    MaintenanceStatus.Snapshot s = new MaintenanceStatus.Snapshot(3, 4, List.of("b"), 66, "x");
    JsonObject status =
        JsonParser.parseString(
                new MaintenanceStatus.Patch()
                    .phase("Running")
                    .progress(s)
                    .lastError(null)
                    .lastUpdate(Instant.parse("2025-01-02T03:04:05.678Z"))
                    .toJson())
            .getAsJsonObject()
            .getAsJsonObject("status");
    assertEquals("Running", status.get("phase").getAsString());
    assertEquals(66, status.get("drainProgress").getAsInt());
    assertEquals(3, status.get("evictionPods").getAsInt());
    assertEquals(4, status.get("totalpods").getAsInt());
    assertEquals("[\"b\"]", status.get("pendingPods").toString());
    assertTrue(status.get("lastError").isJsonNull());
    assertEquals("2025-01-02T03:04:05Z", status.get("lastUpdate").getAsString());
    JsonObject done =
        JsonParser.parseString(new MaintenanceStatus.Patch().pendingPods(List.of()).toJson())
            .getAsJsonObject();
    assertTrue(done.getAsJsonObject("status").get("pendingPods").isJsonNull());
  }
}
