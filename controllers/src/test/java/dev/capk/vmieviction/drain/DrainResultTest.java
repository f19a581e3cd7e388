package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.NodeDrainer.DrainResult;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DrainResultTest {
  private static final PodRef A = new PodRef("ns", "a", "1");
  private static final PodRef B = new PodRef("ns", "b", "2");
  private static final PodRef C = new PodRef("ns", "c", "3");

  /** A result with these pods and nothing else, evictions used, no dry run. */
  private static DrainResult result(
      List<PodRef> evicted,
      List<SkippedPod> skipped,
      Map<PodRef, String> pending,
      Map<PodRef, String> failed,
      Map<PodRef, Set<String>> blocking,
      boolean timedOut,
      Optional<String> interruption) {
    return new DrainResult(
        "n1",
        DryRun.NONE,
        false,
        true,
        evicted,
        skipped,
        pending,
        blocking,
        failed,
        List.of(),
        timedOut,
        interruption);
  }

  @Test
  void completeWhenNothingPendingOrFailed() {
    DrainResult r =
        result(
            List.of(B, A),
            List.of(new SkippedPod(C, "mirror pod")),
            Map.of(),
            Map.of(),
            Map.of(),
            false,
            Optional.empty());
    assertTrue(r.isComplete());
    assertEquals(List.of(A, B), r.evicted(), "sorted");
    assertEquals("node/n1 drained: 2 evicted, 1 skipped", r.summary());
  }

  @Test
  void timeoutSummaryNamesPendingPodsAndTheirBudgets() {
    DrainResult r =
        result(
            List.of(A),
            List.of(),
            Map.of(B, "blocked by PodDisruptionBudget web-pdb", C, "terminating"),
            Map.of(),
            Map.of(B, Set.of("web-pdb")),
            true,
            Optional.empty());
    assertFalse(r.isComplete());
    assertEquals(
        "node/n1 not drained: timed out; 1 evicted, 2 pending (ns/b blocked by PodDisruptionBudget web-pdb, "
            + "ns/c terminating), 0 skipped",
        r.summary());
  }

  @Test
  void aFailedPodMakesTheDrainIncomplete() {
    DrainResult r =
        new DrainResult(
            "n1",
            DryRun.NONE,
            false,
            false,
            List.of(),
            List.of(),
            Map.of(),
            Map.of(),
            Map.of(A, "several budgets"),
            List.of(),
            false,
            Optional.empty());
    assertFalse(r.isComplete());
    assertTrue(r.summary().contains("0 deleted"));
    assertTrue(r.summary().contains("1 failed (ns/a: several budgets)"));
  }

  @Test
  void anInterruptionMakesTheDrainIncompleteAndSaysWhy() {
    DrainResult r =
        result(
            List.of(),
            List.of(),
            Map.of(A, DrainResult.NOT_EVICTED),
            Map.of(),
            Map.of(),
            false,
            Optional.of("lost the watch"));
    assertFalse(r.isComplete());
    assertTrue(r.summary().contains("lost the watch"));
    assertEquals("lost the watch", r.interruption().orElseThrow());
  }

  @Test
  void dryRunIsSaidInTheSummary() {
    DrainResult r =
        new DrainResult(
            "n1",
            DryRun.SERVER,
            false,
            true,
            List.of(),
            List.of(),
            Map.of(),
            Map.of(),
            Map.of(),
            List.of(),
            false,
            Optional.empty());
    assertTrue(r.summary().startsWith("node/n1 drained (server dry run)"));
  }
}
