package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.NodeDrainer.DrainResult;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DrainResultTest {
  private static final PodRef A = new PodRef("ns", "a", "1");
  private static final PodRef B = new PodRef("ns", "b", "2");
  private static final PodRef C = new PodRef("ns", "c", "3");

  @Test
  void completeWhenNothingPendingOrFailed() {
    DrainResult r = new DrainResult(List.of(B, A), Map.of(), Map.of(), false, Optional.empty());
    assertTrue(r.isComplete());
    assertEquals(List.of(A, B), r.evicted(), "sorted");
    assertEquals("drained: 2 evicted", r.toString());
  }

  @Test
  void timeoutSummaryNamesPendingPodsAndTheirBudgets() {
    DrainResult r =
        new DrainResult(
            List.of(A),
            Map.of(B, "blocked by PodDisruptionBudget web-pdb", C, "terminating"),
            Map.of(),
            true,
            Optional.empty());
    assertFalse(r.isComplete());
    assertEquals(
        "not drained: timed out; 1 evicted, 2 pending (ns/b blocked by PodDisruptionBudget web-pdb, "
            + "ns/c terminating)",
        r.toString());
  }

  @Test
  void aFailedPodMakesTheDrainIncomplete() {
    DrainResult r =
        new DrainResult(List.of(), Map.of(), Map.of(A, "several budgets"), false, Optional.empty());
    assertFalse(r.isComplete());
    assertTrue(r.toString().contains("1 failed (ns/a: several budgets)"), r.toString());
  }

  @Test
  void anInterruptionMakesTheDrainIncompleteAndSaysWhy() {
    DrainResult r =
        new DrainResult(
            List.of(),
            Map.of(A, DrainResult.NOT_EVICTED),
            Map.of(),
            false,
            Optional.of("lost the watch"));
    assertFalse(r.isComplete());
    assertTrue(r.toString().contains("lost the watch"));
    assertEquals("lost the watch", r.interruption().orElseThrow());
  }
}
