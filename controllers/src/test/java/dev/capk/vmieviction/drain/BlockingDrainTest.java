package dev.capk.vmieviction.drain;

import static dev.capk.vmieviction.drain.TestPods.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.NodeDrainer.BlockingDrain;
import dev.capk.vmieviction.drain.NodeDrainer.DrainOutput;
import dev.capk.vmieviction.drain.NodeDrainer.Drained;
import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.EvictionOutcome;
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
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A blocking drain's per-pod bookkeeping: which of kubectl's lines each eviction answer and each
 * look at the node's pods writes, and how the drain's end is reported.
 */
class BlockingDrainTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private final List<String> calls = new ArrayList<>();
  private final DrainOutput recorder =
      new DrainOutput() {
        @Override
        public void out(String line) {
          calls.add(line);
        }

        @Override
        public void err(String line) {
          calls.add("err: " + line);
        }
      };

  private final V1Pod a = pod("ns", "a").ownedBy("ReplicaSet", "r").build();
  private final V1Pod b = pod("ns", "b").ownedBy("ReplicaSet", "r").build();
  private final PodRef refA = PodRef.of(a);
  private final PodRef refB = PodRef.of(b);
  private final DrainMemory memory = new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(5));

  private BlockingDrain progress(Consumer<DrainOptions.Builder> options) {
    memory.evictionVersion = Optional.of("policy/v1");
    return new BlockingDrain(
        null,
        "n",
        plan(a, b),
        memory,
        DrainOptions.of(options),
        recorder,
        Clock.fixed(NOW, ZoneOffset.UTC));
  }

  private BlockingDrain progress() {
    return progress(b -> {});
  }

  /** The lines {@link BlockingDrain#finish} writes now, and what it returns. */
  private Drained finish(BlockingDrain p, List<String> lines) {
    int before = calls.size();
    Drained d = p.finish();
    lines.addAll(calls.subList(before, calls.size()));
    calls.subList(before, calls.size()).clear();
    return d;
  }

  private List<String> endLines(BlockingDrain p) {
    List<String> lines = new ArrayList<>();
    finish(p, lines);
    return lines;
  }

  private static DrainPlan plan(V1Pod... toEvict) {
    return new DrainPlan(List.of(toEvict), Map.of(), Map.of(), Map.of());
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
    assertEquals(
        List.of(
            "err: There are pending pods in node \"n\" when an error occurred: incomplete",
            "err: pod/b -n ns (terminating)"),
        endLines(p));
    assertFalse(memory.due(refB, NOW), "an accepted eviction is not sent again at once");
    p.seen(List.of());
    assertTrue(p.complete());
    List<String> end = new ArrayList<>();
    Drained d = finish(p, end);
    assertEquals(List.of(refA, refB), d.evicted());
    assertTrue(d.error().isEmpty());
    assertEquals(List.of("node/n drained"), end);
    assertEquals(
        List.of("evicting pod ns/a", "evicting pod ns/b", "pod/a evicted", "pod/b evicted"), calls);
  }

  @Test
  void deletionsAreReportedAsDeletedWhenEvictionIsOff() {
    BlockingDrain p = progress();
    memory.evictionVersion = Optional.empty();
    p.sending(refA);
    p.answered(refA, outcome(EvictionOutcome.Kind.GONE, "not found"));
    assertEquals(List.of("pod/a deleted"), calls, "kubectl announces no deletion");
  }

  @Test
  void aNamesakeWithAnotherUidDoesNotCountAsTheFollowedPod() {
    BlockingDrain p = progress();
    V1Pod namesake = pod("ns", "a").ownedBy("StatefulSet", "s").build();
    p.seen(List.of(namesake, b));
    assertEquals(List.of(refA), finish(p, new ArrayList<>()).evicted());
    assertEquals(List.of(b), p.sendable(), "the namesake is not this drain's to evict");
  }

  @Test
  void inAServerDryRunAnAcceptedEvictionIsTheEnd() {
    BlockingDrain p = progress(b -> b.dryRun = DryRun.SERVER);
    p.answered(refA, EvictionOutcome.accepted());
    memory.failed(refB, "boom", false, NOW);
    p.answered(refB, outcome(EvictionOutcome.Kind.FAILED, "boom"));
    assertTrue(p.complete());
    List<String> end = new ArrayList<>();
    Drained d = finish(p, end);
    assertEquals(List.of(refA), d.evicted());
    assertEquals(Optional.of("some pods could not be evicted"), d.error());
    assertEquals(List.of("err: failed: pod/b -n ns: boom"), end, "failed, and nothing pending");
  }

  @Test
  void inAClientDryRunEveryPlannedPodWouldGoAndIsAnnouncedAsKubectlPrintsIt() {
    BlockingDrain p =
        new BlockingDrain(
            null,
            "n",
            plan(a, b),
            new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(5)),
            DrainOptions.of(b -> b.dryRun = DryRun.CLIENT),
            recorder,
            Clock.fixed(NOW, ZoneOffset.UTC));
    p.wouldAllGo();
    assertTrue(p.complete());
    Drained r = p.finish();
    assertEquals(List.of(refA, refB), r.evicted());
    assertTrue(r.error().isEmpty());
    assertEquals(
        List.of(
            "evicting pod ns/a (dry run)",
            "evicting pod ns/b (dry run)",
            "node/n drained (dry run)"),
        calls);
  }

  @Test
  void aRefusalIsReportedWithTheBudgetsTheMemoryKnowsAndThePodStaysPendingAndBlocked() {
    BlockingDrain p = progress();
    memory.refused(refA, EvictionOutcome.Kind.BLOCKED, Set.of("pdb-1"), NOW);
    p.answered(refA, outcome(EvictionOutcome.Kind.BLOCKED, "Cannot evict pod"));
    assertEquals(
        List.of(
            "err: error when evicting pods/\"a\" -n \"ns\" (will retry after 5s): Cannot evict pod"
                + " [PodDisruptionBudget pdb-1]"),
        calls);
    assertTrue(
        endLines(p).contains("err: pod/a -n ns (blocked by PodDisruptionBudget pdb-1)"),
        "pending and blocked");
    p.seen(List.of(b));
    assertEquals(
        List.of(
            "err: There are pending pods in node \"n\" when an error occurred: incomplete",
            "err: pod/b -n ns"),
        endLines(p),
        "a pod that went is no longer blocked");
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
        List.of(
            "err: error when evicting pods/\"a\" -n \"ns\" (will retry): connection reset",
            "err: error when evicting pods/\"a\" -n \"ns\": connection reset"),
        calls);
    assertTrue(
        endLines(p).contains("err: failed: pod/a -n ns: connection reset"), "a failure is final");
    assertEquals(List.of(b), p.sendable());
  }

  @Test
  void aTerminatingNamespaceIsRetriedAndSaidSo() {
    BlockingDrain p = progress();
    memory.refused(refA, EvictionOutcome.Kind.NAMESPACE_TERMINATING, Set.of(), NOW);
    p.answered(refA, outcome(EvictionOutcome.Kind.NAMESPACE_TERMINATING, "forbidden"));
    assertEquals(
        List.of(
            "err: error when evicting pods/\"a\" -n \"ns\" (will retry): namespace ns is"
                + " terminating: forbidden"),
        calls);
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
    assertTrue(endLines(waitsForEver).contains("err: pod/a -n ns (terminating)"));
    calls.clear();

    BlockingDrain p = progress(b -> b.skipWaitForDeleteTimeout = Duration.ofSeconds(30));
    p.seen(List.of(deleting, b));
    assertEquals(List.of(b), p.sendable(), "no longer waited for");
    assertEquals(
        List.of("pod \"a\" deletion timestamp older than 30 seconds, not waited for, skipping"),
        calls);
    assertFalse(endLines(p).contains("err: pod/a -n ns (terminating)"), "nor pending");
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
    assertEquals(List.of("evicting pod ns/a", "pod/a evicted"), calls);
  }

  @Test
  void aTimeoutNamesThePodABudgetKeepsRefusingAndWhatHoldsEachPendingPod() {
    BlockingDrain p = progress(b -> b.timeout = Duration.ofSeconds(3));
    memory.refused(refA, EvictionOutcome.Kind.BLOCKED, Set.of("db", "web"), NOW);
    p.answered(refA, outcome(EvictionOutcome.Kind.BLOCKED, "Cannot evict pod"));
    calls.clear();
    p.timedOut = true;
    String why = "error when evicting pods/\"a\" -n \"ns\": global timeout reached: 3s";
    List<String> end = new ArrayList<>();
    assertEquals(Optional.of(why), finish(p, end).error());
    assertEquals(
        List.of(
            "err: There are pending pods in node \"n\" when an error occurred: " + why,
            "err: pod/a -n ns (blocked by PodDisruptionBudget db, web)",
            "err: pod/b -n ns"),
        end);
  }

  @Test
  void anOutputThatThrowsDoesNotBreakTheDrain() {
    BlockingDrain p =
        new BlockingDrain(
            null,
            "n",
            plan(a),
            memory,
            DrainOptions.defaults(),
            new DrainOutput() {
              @Override
              public void out(String line) {
                throw new IllegalStateException("output bug");
              }
            },
            Clock.systemUTC());
    p.seen(List.of());
    assertTrue(p.complete());
  }
}
