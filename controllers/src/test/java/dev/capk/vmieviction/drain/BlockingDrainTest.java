package dev.capk.vmieviction.drain;

import static dev.capk.vmieviction.drain.TestPods.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.DrainStepper.EvictionOutcome;
import dev.capk.vmieviction.drain.NodeDrainer.BlockingDrain;
import dev.capk.vmieviction.drain.NodeDrainer.DrainProgressListener;
import dev.capk.vmieviction.drain.NodeDrainer.DrainResult;
import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A blocking drain's per-pod bookkeeping: which listener call each eviction answer and each look at
 * the node's pods makes, and what the result says.
 */
class BlockingDrainTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private final List<String> calls = new ArrayList<>();
  private final DrainProgressListener recorder =
      new DrainProgressListener() {
        @Override
        public void evicting(PodRef p, boolean eviction) {
          calls.add((eviction ? "evicting " : "deleting ") + p);
        }

        @Override
        public void blocked(PodRef p, Set<String> budgets, String message) {
          calls.add("blocked " + p + " " + budgets + ": " + message);
        }

        @Override
        public void retrying(PodRef p, String reason) {
          calls.add("retrying " + p + ": " + reason);
        }

        @Override
        public void gone(PodRef p, boolean eviction) {
          calls.add((eviction ? "evicted " : "deleted ") + p);
        }

        @Override
        public void failed(PodRef p, String r) {
          calls.add("failed " + p + ": " + r);
        }

        @Override
        public void notWaitedFor(PodRef p, String r) {
          calls.add("notWaited " + p + ": " + r);
        }
      };

  private final V1Pod a = pod("ns", "a").ownedBy("ReplicaSet", "r").build();
  private final V1Pod b = pod("ns", "b").ownedBy("ReplicaSet", "r").build();
  private final PodRef refA = PodRef.of(a);
  private final PodRef refB = PodRef.of(b);
  private final DrainMemory memory = new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(5));

  private BlockingDrain progress(DrainOptions.Builder options) {
    memory.evictionVersion(Optional.of("policy/v1"));
    return new BlockingDrain(
        null, "n", plan(a, b), memory, options.build(), recorder, Clock.fixed(NOW, ZoneOffset.UTC));
  }

  private BlockingDrain progress() {
    return progress(DrainOptions.builder());
  }

  private static List<PodRef> terminating(BlockingDrain p) {
    return p.result().pending().entrySet().stream()
        .filter(e -> e.getValue().equals("terminating"))
        .map(Map.Entry::getKey)
        .toList();
  }

  private static DrainPlan plan(V1Pod... toEvict) {
    return new DrainPlan(List.of(toEvict), List.of(), Map.of(), Map.of());
  }

  private static EvictionOutcome outcome(EvictionOutcome.Kind kind, String message) {
    return new EvictionOutcome(kind, message, Set.of(), 0);
  }

  @Test
  void acceptedPodsArePendingUntilTheWatchNoLongerListsThem() {
    BlockingDrain p = progress();
    p.sending(refA);
    p.sending(refB);
    memory.accepted(refA, NOW);
    p.answered(refA, EvictionOutcome.accepted());
    memory.accepted(refB, NOW);
    p.answered(refB, EvictionOutcome.accepted());
    p.seen(List.of(b));
    p.seen(List.of(b)); // a repeated look changes nothing
    assertEquals(List.of(refB), List.copyOf(p.result().pending().keySet()));
    assertEquals(List.of(refB), terminating(p));
    assertFalse(memory.due(refB, NOW), "an accepted eviction is not sent again at once");
    p.seen(List.of());
    assertTrue(p.complete());
    assertEquals(List.of(refA, refB), p.result().evicted());
    assertEquals(List.of("evicting ns/a", "evicting ns/b", "evicted ns/a", "evicted ns/b"), calls);
  }

  @Test
  void deletionsAreReportedAsDeletedWhenEvictionIsOff() {
    BlockingDrain p = progress();
    memory.evictionVersion(Optional.empty());
    p.sending(refA);
    p.answered(refA, outcome(EvictionOutcome.Kind.GONE, "not found"));
    assertEquals(List.of("deleting ns/a", "deleted ns/a"), calls);
  }

  @Test
  void aNamesakeWithAnotherUidDoesNotCountAsTheFollowedPod() {
    BlockingDrain p = progress();
    V1Pod namesake = pod("ns", "a").ownedBy("StatefulSet", "s").build();
    p.seen(List.of(namesake, b));
    assertEquals(List.of(refA), p.result().evicted());
    assertEquals(List.of(b), p.sendable(), "the namesake is not this drain's to evict");
  }

  @Test
  void inAServerDryRunAnAcceptedEvictionIsTheEnd() {
    BlockingDrain p = progress(DrainOptions.builder().dryRun(DryRun.SERVER));
    p.answered(refA, EvictionOutcome.accepted());
    memory.failed(refB, "boom", false, NOW);
    p.answered(refB, outcome(EvictionOutcome.Kind.FAILED, "boom"));
    assertTrue(p.complete());
    assertEquals(List.of(refA), p.result().evicted());
    assertEquals(Map.of(refB, "boom"), p.result().failed());
    assertTrue(p.result().pending().isEmpty());
  }

  @Test
  void inAClientDryRunEveryPlannedPodWouldGoAndIsAnnouncedAsKubectlPrintsIt() {
    BlockingDrain p =
        new BlockingDrain(
            null,
            "n",
            plan(a, b),
            new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(5)),
            DrainOptions.builder().dryRun(DryRun.CLIENT).build(),
            recorder,
            Clock.fixed(NOW, ZoneOffset.UTC));
    p.wouldAllGo();
    assertTrue(p.complete());
    DrainResult r = p.result();
    assertEquals(List.of(refA, refB), r.evicted());
    assertTrue(r.isComplete());
    assertEquals(List.of("evicting ns/a", "evicting ns/b"), calls);
  }

  @Test
  void aRefusalIsReportedWithTheBudgetsTheMemoryKnowsAndThePodStaysPendingAndBlocked() {
    BlockingDrain p = progress();
    memory.refused(refA, EvictionOutcome.Kind.BLOCKED, Set.of("pdb-1"), NOW);
    p.answered(refA, outcome(EvictionOutcome.Kind.BLOCKED, "Cannot evict pod"));
    assertEquals(List.of("blocked ns/a [pdb-1]: Cannot evict pod"), calls);
    assertEquals("blocked by PodDisruptionBudget pdb-1", p.result().pending().get(refA));
    p.seen(List.of(b));
    assertFalse(p.result().pending().containsKey(refA), "a pod that went is no longer blocked");
  }

  @Test
  void transientFailuresAreRetriedUntilTheMemoryGivesUp() {
    BlockingDrain p = progress();
    memory.transientFailure(refA, "connection reset", NOW);
    p.answered(refA, outcome(EvictionOutcome.Kind.TRANSIENT, "connection reset"));
    memory.failed(refA, "connection reset", false, NOW);
    p.answered(refA, outcome(EvictionOutcome.Kind.TRANSIENT, "connection reset"));
    p.answered(refA, EvictionOutcome.accepted());
    assertEquals(
        List.of("retrying ns/a: connection reset", "failed ns/a: connection reset"), calls);
    assertEquals(Map.of(refA, "connection reset"), p.result().failed(), "a failure is final");
    assertEquals(List.of(b), p.sendable());
  }

  @Test
  void aTerminatingNamespaceIsRetriedAndSaidSo() {
    BlockingDrain p = progress();
    memory.refused(refA, EvictionOutcome.Kind.NAMESPACE_TERMINATING, Set.of(), NOW);
    p.answered(refA, outcome(EvictionOutcome.Kind.NAMESPACE_TERMINATING, "forbidden"));
    assertEquals(List.of("retrying ns/a: namespace ns is terminating: forbidden"), calls);
  }

  @Test
  void stuckDeletionsAreNotWaitedForOnceOlderThanSkipWait() {
    V1Pod deleting = pod("ns", "a").build();
    deleting.getMetadata().setUid(a.getMetadata().getUid());
    deleting
        .getMetadata()
        .setDeletionTimestamp(OffsetDateTime.ofInstant(NOW.minusSeconds(31), ZoneOffset.UTC));
    BlockingDrain waitsForEver = progress();
    waitsForEver.seen(List.of(deleting, b));
    assertEquals(List.of(deleting, b), waitsForEver.sendable());
    assertEquals(List.of(refA), terminating(waitsForEver));
    calls.clear();

    BlockingDrain p =
        progress(DrainOptions.builder().skipWaitForDeleteTimeout(Duration.ofSeconds(30)));
    p.seen(List.of(deleting, b));
    assertEquals(List.of(b), p.sendable(), "no longer waited for");
    assertEquals(
        List.of("notWaited ns/a: deletion timestamp older than 30 seconds, not waited for"), calls);
    assertFalse(p.result().pending().containsKey(refA), "nor pending");
  }

  @Test
  void aPodSomeoneElseDeletesIsAnnouncedOnceAsKubectlWould() {
    V1Pod deleting = pod("ns", "a").build();
    deleting.getMetadata().setUid(a.getMetadata().getUid());
    deleting.getMetadata().setDeletionTimestamp(OffsetDateTime.ofInstant(NOW, ZoneOffset.UTC));
    BlockingDrain p = progress();
    p.seen(List.of(deleting, b));
    p.seen(List.of(deleting, b));
    p.seen(List.of(b));
    assertEquals(List.of("evicting ns/a", "evicted ns/a"), calls);
  }

  @Test
  void aListenerThatThrowsDoesNotBreakTheDrain() {
    BlockingDrain p =
        new BlockingDrain(
            null,
            "n",
            plan(a),
            memory,
            DrainOptions.defaults(),
            new DrainProgressListener() {
              @Override
              public void gone(PodRef pod, boolean eviction) {
                throw new IllegalStateException("listener bug");
              }
            },
            Clock.systemUTC());
    p.seen(List.of());
    assertTrue(p.complete());
  }
}
