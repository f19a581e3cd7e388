package dev.capk.vmieviction.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.drain.DrainResult;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SkippedPod;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DrainProgressTest {
  static final PodRef A = new PodRef("ns", "a", "1");
  static final PodRef B = new PodRef("ns", "b", "2");
  static final PodRef C = new PodRef("ns", "c", "3");
  static final PodRef DS = new PodRef("kube-system", "agent", "4");

  @Test
  void theFirstPlanCountsThePodsAndProgressFollowsEachPodThatGoes() {
    DrainProgress p = new DrainProgress(0, 0);
    p.planned(List.of(A, B, C), List.of(new SkippedPod(DS, "DaemonSet-managed")));
    DrainProgress.Snapshot s = p.snapshot();
    assertEquals(3, s.evictionPods());
    assertEquals(4, s.totalPods());
    assertEquals(List.of("a", "b", "c"), s.pendingPods());
    assertEquals(0, s.percent());
    p.gone(A);
    assertEquals(33, p.snapshot().percent());
    p.gone(B);
    p.gone(C);
    assertEquals(100, p.snapshot().percent());
    assertEquals(List.of(), p.snapshot().pendingPods());
  }

  @Test
  void countsFromTheStatusSurviveARestartAndLaterPlansDoNotRecount() {
    DrainProgress p = new DrainProgress(4, 6);
    p.planned(List.of(C), List.of());
    assertEquals(4, p.snapshot().evictionPods());
    assertEquals(6, p.snapshot().totalPods());
    assertEquals(75, p.snapshot().percent());
  }

  @Test
  void progressStaysWithinBoundsAndNeverReadsDoneWhilePodsArePending() {
    assertEquals(100, DrainProgress.percent(0, 0));
    assertEquals(0, DrainProgress.percent(0, 2));
    assertEquals(0, DrainProgress.percent(2, 5), "more pods arrived than were counted");
    assertEquals(99, DrainProgress.percent(1000, 1));
  }

  @Test
  void aBlockedEvictionNamesThePodAndTheBudget() {
    DrainProgress p = new DrainProgress(0, 0);
    p.planned(List.of(A), List.of());
    p.blocked(A, Set.of("db-pdb"));
    assertEquals(
        "cannot evict pod ns/a: blocked by PodDisruptionBudget ns/db-pdb",
        p.snapshot().lastError());
    p.blocked(A, Set.of());
    assertTrue(p.snapshot().lastError().contains("a PodDisruptionBudget"));
  }

  @Test
  void thePassOutcomeIsTheFinalWordOnPendingPodsAndTheError() {
    DrainProgress p = new DrainProgress(0, 0);
    p.planned(List.of(A, B, C), List.of());
    p.gone(A);
    DrainResult incomplete =
        DrainResult.builder("n1")
            .evicted(List.of(A))
            .pending(List.of(B, C))
            .pendingTerminating(List.of(C))
            .blockingBudgets(Map.of(B, Set.of("db")))
            .timedOut(true)
            .build();
    p.finished(incomplete);
    DrainProgress.Snapshot s = p.snapshot();
    assertEquals(List.of("b", "c"), s.pendingPods());
    assertEquals(33, s.percent());
    assertEquals(
        "not all pods evicted: 2 left (ns/b blocked by PodDisruptionBudget ns/db; ns/c still terminating);"
            + " retrying",
        s.lastError());

    p.finished(DrainResult.builder("n1").evicted(List.of(B, C)).build());
    assertEquals(List.of(), p.snapshot().pendingPods());
    assertNull(p.snapshot().lastError());
  }

  @Test
  void failuresAndInterruptionsAreNamedToo() {
    DrainResult r =
        DrainResult.builder("n1")
            .failed(Map.of(A, "more than one PodDisruptionBudget"))
            .interruption("lost the API server")
            .build();
    assertEquals(
        "not all pods evicted: 1 left (ns/a cannot be evicted: more than one PodDisruptionBudget);"
            + " drain attempt stopped: lost the API server",
        DrainProgress.incompleteMessage(r));
  }

  @Test
  void theStatusPatchSetsWhatChangesAndRemovesWhatIsOver() {
    DrainProgress.Snapshot s = new DrainProgress.Snapshot(3, 4, List.of("b"), 66, "x");
    JsonObject status =
        JsonParser.parseString(
                StatusPatch.of()
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
        JsonParser.parseString(StatusPatch.of().pendingPods(List.of()).toJson()).getAsJsonObject();
    assertTrue(done.getAsJsonObject("status").get("pendingPods").isJsonNull());
  }
}
