package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DrainResultTest {
  private static final PodRef A = new PodRef("ns", "a", "1");
  private static final PodRef B = new PodRef("ns", "b", "2");
  private static final PodRef C = new PodRef("ns", "c", "3");

  @Test
  void completeWhenNothingPendingOrFailed() {
    DrainResult r =
        DrainResult.builder("n1")
            .evicted(List.of(B, A))
            .skipped(List.of(new SkippedPod(C, "mirror pod")))
            .elapsed(Duration.ofMillis(1200))
            .build();
    assertTrue(r.isComplete());
    assertEquals(List.of(A, B), r.evicted(), "sorted");
    assertEquals("node/n1 drained: 2 evicted, 1 skipped, in 1200 ms", r.summary());
  }

  @Test
  void timeoutSummaryNamesPendingPodsAndTheirBudgets() {
    DrainResult r =
        DrainResult.builder("n1")
            .evicted(List.of(A))
            .pending(List.of(B, C))
            .pendingTerminating(List.of(C))
            .blockingBudgets(Map.of(B, Set.of("web-pdb")))
            .timedOut(true)
            .elapsed(Duration.ofSeconds(30))
            .build();
    assertFalse(r.isComplete());
    assertEquals(
        "node/n1 not drained: timed out; 1 evicted, 2 pending (ns/b blocked by PodDisruptionBudget web-pdb, "
            + "ns/c terminating), 0 skipped, in 30000 ms",
        r.summary());
  }

  @Test
  void aFailedPodMakesTheDrainIncomplete() {
    DrainResult r =
        DrainResult.builder("n1").usedEviction(false).failed(Map.of(A, "several budgets")).build();
    assertFalse(r.isComplete());
    assertTrue(r.summary().contains("0 deleted"));
    assertTrue(r.summary().contains("1 failed (ns/a: several budgets)"));
  }

  @Test
  void anInterruptionMakesTheDrainIncompleteAndSaysWhy() {
    DrainResult r =
        DrainResult.builder("n1").interruption("lost the watch").pending(List.of(A)).build();
    assertFalse(r.isComplete());
    assertTrue(r.summary().contains("lost the watch"));
    assertEquals("lost the watch", r.interruption().orElseThrow());
  }

  @Test
  void dryRunIsSaidInTheSummary() {
    assertTrue(
        DrainResult.builder("n1")
            .dryRun(DryRun.SERVER)
            .build()
            .summary()
            .startsWith("node/n1 drained (server dry run)"));
  }
}
