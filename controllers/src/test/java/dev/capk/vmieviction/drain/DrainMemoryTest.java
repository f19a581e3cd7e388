package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.EvictionOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DrainMemoryTest {

  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final PodRef POD = new PodRef("ns", "p", "uid-p");

  final DrainMemory memory = new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(20));

  @Test
  void aPodNeverTriedIsDueAtOnce() {
    assertTrue(memory.due(POD, T0));
  }

  @Test
  void aRefusedPodIsDueAfterKubectlsIntervalThenLessOftenUpToTheLongestWait() {
    assertEquals(Duration.ofSeconds(5), memory.refusalWait(0));
    assertEquals(Duration.ofSeconds(10), memory.refusalWait(1));
    assertEquals(Duration.ofSeconds(20), memory.refusalWait(2));
    assertEquals(Duration.ofSeconds(20), memory.refusalWait(30));

    memory.refused(POD, EvictionOutcome.Kind.BLOCKED, Set.of("pdb"), T0);
    assertFalse(memory.due(POD, T0.plusSeconds(4)));
    assertTrue(memory.due(POD, T0.plusSeconds(5)));
    memory.refused(POD, EvictionOutcome.Kind.BLOCKED, Set.of("pdb"), T0.plusSeconds(5));
    assertFalse(memory.due(POD, T0.plusSeconds(14)));
    assertTrue(memory.due(POD, T0.plusSeconds(15)));
    assertEquals(Set.of("pdb"), memory.state(POD).budgets);
  }

  @Test
  void aPodRefusedByABudgetThatAllowsAgainIsDueAtOnceOthersKeepTheirWait() {
    PodRef other = new PodRef("ns", "q", "uid-q");
    PodRef elsewhere = new PodRef("other-ns", "p", "uid-r");
    memory.refused(POD, EvictionOutcome.Kind.BLOCKED, Set.of("pdb"), T0);
    memory.refused(other, EvictionOutcome.Kind.BLOCKED, Set.of("another"), T0);
    memory.refused(elsewhere, EvictionOutcome.Kind.BLOCKED, Set.of("pdb"), T0);

    memory.budgetsAllow(Set.of("ns/pdb"));

    assertTrue(memory.due(POD, T0.plusSeconds(1)), "its budget allows: due now");
    assertFalse(memory.due(other, T0.plusSeconds(1)), "another budget: still waiting");
    assertFalse(memory.due(elsewhere, T0.plusSeconds(1)), "a budget of that name elsewhere");
    // Refused again: the wait goes on doubling.
    memory.refused(POD, EvictionOutcome.Kind.BLOCKED, Set.of("pdb"), T0.plusSeconds(1));
    assertFalse(memory.due(POD, T0.plusSeconds(10)));
  }

  @Test
  void aWokenPodItsStepHoldsBackKeepsItsTimerAndIsNoLongerDue() {
    memory.refused(POD, EvictionOutcome.Kind.BLOCKED, Set.of("pdb"), T0);
    memory.budgetsAllow(Set.of("ns/pdb"));
    assertTrue(memory.due(POD, T0.plusSeconds(1)), "woken: due before its timer");
    assertFalse(memory.timerDue(POD, T0.plusSeconds(1)), "but not by its timer");

    // Another drain took the disruption: held, waiting for the next wake or the timer.
    memory.held(POD, Set.of("ns/pdb"), T0.plusSeconds(1));

    assertFalse(memory.due(POD, T0.plusSeconds(4)));
    assertTrue(memory.due(POD, T0.plusSeconds(5)), "the timer of its refusal stays");
    assertEquals(EvictionOutcome.Kind.BLOCKED, memory.state(POD).waiting);
  }

  @Test
  void aPodHeldWithoutARequestWaitsAsARefusedOneWouldAndBacksOff() {
    memory.held(POD, Set.of("ns/pdb"), T0);
    assertFalse(memory.due(POD, T0.plusSeconds(4)));
    assertTrue(memory.timerDue(POD, T0.plusSeconds(5)));
    memory.held(POD, Set.of("ns/pdb"), T0.plusSeconds(5));
    assertFalse(memory.due(POD, T0.plusSeconds(14)), "10 s after the second hold");
    assertTrue(memory.due(POD, T0.plusSeconds(15)));
    assertEquals(Set.of("ns/pdb"), memory.state(POD).budgets);
  }

  @Test
  void anAcceptedEvictionIsNotSentAgainWhileTheDeletionIsOnItsWay() {
    memory.accepted(POD, T0);
    assertFalse(memory.due(POD, T0.plusSeconds(1)));
    assertEquals(1, memory.evictedCount());
    // Never seen deleting (a lost deletion): sent again after the retry interval.
    assertTrue(memory.due(POD, T0.plusSeconds(5)));
  }

  @Test
  void theServersRetryAfterIsHonouredAndAtLeastOneSecond() {
    memory.throttled(POD, 0, T0);
    assertFalse(memory.due(POD, T0.plusMillis(999)));
    assertTrue(memory.due(POD, T0.plusSeconds(1)));
    memory.throttled(POD, 7, T0);
    assertFalse(memory.due(POD, T0.plusSeconds(6)));
  }

  @Test
  void transientFailuresBackOffAndAreReportedFailedAfterTheLimitButStillRetried() {
    boolean reported = false;
    Instant now = T0;
    for (int i = 0; i <= DrainMemory.MAX_TRANSIENT_FAILURES; i++) {
      reported = memory.transientFailure(POD, "connection reset", now);
    }
    assertTrue(reported);
    assertEquals(EvictionOutcome.Kind.FAILED, memory.state(POD).waiting);
    assertEquals("connection reset", memory.state(POD).failure);
    assertTrue(memory.due(POD, now.plusSeconds(5)));
  }

  @Test
  void podsThatLeftTheNodeAreForgotten() {
    memory.refused(POD, EvictionOutcome.Kind.BLOCKED, Set.of(), T0);
    memory.keepOnly(Set.of());
    assertTrue(memory.due(POD, T0));
  }
}
