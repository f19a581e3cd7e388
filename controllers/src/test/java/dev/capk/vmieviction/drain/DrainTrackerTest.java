package dev.capk.vmieviction.drain;

import static dev.capk.vmieviction.drain.TestPods.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The per-pod bookkeeping between eviction tasks, the watch and the orchestrator. */
class DrainTrackerTest {
  private final List<String> calls = Collections.synchronizedList(new ArrayList<>());
  private final DrainProgressListener recorder =
      new DrainProgressListener() {
        @Override
        public void evicted(PodRef p) {
          calls.add("evicted " + p);
        }

        @Override
        public void deleted(PodRef p) {
          calls.add("deleted " + p);
        }

        @Override
        public void failed(PodRef p, String r) {
          calls.add("failed " + p + ": " + r);
        }

        @Override
        public void notWaitedFor(PodRef p, String r) {
          calls.add("notWaited " + p);
        }
      };

  private final V1Pod a = pod("ns", "a").ownedBy("ReplicaSet", "r").build();
  private final V1Pod b = pod("ns", "b").ownedBy("ReplicaSet", "r").build();

  private DrainTracker tracker(boolean dryRun, boolean eviction) {
    return new DrainTracker("node-1", List.of(a, b), dryRun, eviction, recorder);
  }

  @Test
  void acceptedPodsArePendingUntilTheWatchSeesThemDeleted() throws Exception {
    DrainTracker t = tracker(false, true);
    t.accepted(PodRef.of(a));
    t.accepted(PodRef.of(b));
    assertEquals(
        DrainTracker.Step.CONTINUE, t.awaitStep(Deadline.NONE, TimeUnit.MILLISECONDS.toNanos(1)));
    t.podDeleted(a);
    t.podDeleted(a); // a repeated event changes nothing
    DrainTracker.Snapshot s = t.snapshot(Duration.ZERO);
    assertEquals(List.of(PodRef.of(a)), s.gone());
    assertEquals(List.of(PodRef.of(b)), s.pending());
    assertEquals(List.of(PodRef.of(b)), s.pendingTerminating());
    t.podDeleted(b);
    assertEquals(DrainTracker.Step.COMPLETE, t.awaitStep(Deadline.NONE, 1));
    assertEquals(List.of("evicted ns/a", "evicted ns/b"), calls);
  }

  @Test
  void deletionsAreReportedAsDeletedWhenEvictionIsOff() {
    DrainTracker t = tracker(false, false);
    t.gone(PodRef.of(a));
    assertEquals(List.of("deleted ns/a"), calls);
  }

  @Test
  void aRelistWithoutThePodMeansItIsGone() {
    DrainTracker t = tracker(false, true);
    t.relisted(List.of(b));
    assertTrue(t.isDone(PodRef.of(a)));
    assertFalse(t.isDone(PodRef.of(b)));
  }

  @Test
  void aNamesakeWithAnotherUidDoesNotCountAsTheTrackedPod() {
    DrainTracker t = tracker(false, true);
    V1Pod namesake = pod("ns", "a").ownedBy("StatefulSet", "s").build();
    t.relisted(List.of(namesake, b));
    assertTrue(t.isDone(PodRef.of(a)), "the pod we meant is gone even though its name is back");
  }

  @Test
  void inServerDryRunAcceptedIsDone() throws Exception {
    DrainTracker t = tracker(true, true);
    t.accepted(PodRef.of(a));
    t.failed(PodRef.of(b), "boom");
    assertEquals(DrainTracker.Step.COMPLETE, t.awaitStep(Deadline.NONE, 1));
    DrainTracker.Snapshot s = t.snapshot(Duration.ZERO);
    assertEquals(List.of(PodRef.of(a)), s.accepted());
    assertEquals("boom", s.failed().get(PodRef.of(b)));
    assertTrue(s.pending().isEmpty());
  }

  @Test
  void blockedPodsReportTheirBudgetsWhilePending() {
    DrainTracker t = tracker(false, true);
    t.blocked(PodRef.of(a), Set.of("pdb-1"));
    DrainTracker.Snapshot s = t.snapshot(Duration.ZERO);
    assertEquals(Set.of("pdb-1"), s.blockingBudgets().get(PodRef.of(a)));
    t.gone(PodRef.of(a));
    assertTrue(
        t.snapshot(Duration.ZERO).blockingBudgets().isEmpty(),
        "a pod that went is no longer blocked");
  }

  @Test
  void aDoneStateIsFinal() {
    DrainTracker t = tracker(false, true);
    t.failed(PodRef.of(a), "multiple budgets");
    t.gone(PodRef.of(a));
    t.accepted(PodRef.of(a));
    assertEquals("multiple budgets", t.snapshot(Duration.ZERO).failed().get(PodRef.of(a)));
    assertEquals(1, calls.size());
  }

  @Test
  void timeoutEndsTheWait() throws Exception {
    DrainTracker t = tracker(false, true);
    Deadline d = Deadline.after(Duration.ofMillis(20));
    DrainTracker.Step step;
    do {
      step = t.awaitStep(d, TimeUnit.MILLISECONDS.toNanos(5));
    } while (step == DrainTracker.Step.CONTINUE);
    assertEquals(DrainTracker.Step.TIMED_OUT, step);
  }

  @Test
  void aLostWatchEndsTheWaitWithItsReason() throws Exception {
    DrainTracker t = tracker(false, true);
    t.watchFailed("lost the watch");
    assertEquals(DrainTracker.Step.WATCH_FAILED, t.awaitStep(Deadline.NONE, 1));
    assertEquals("lost the watch", t.watchFailure());
  }

  @Test
  void stuckDeletionsAreNotWaitedForOnceOlderThanSkipWait() {
    Instant now = Instant.parse("2025-01-01T00:00:00Z");
    DrainTracker t = tracker(false, true);
    V1Pod deleting = pod("ns", "a").build();
    deleting.getMetadata().setUid(a.getMetadata().getUid());
    deleting
        .getMetadata()
        .setDeletionTimestamp(OffsetDateTime.ofInstant(now.minusSeconds(31), ZoneOffset.UTC));
    t.podSeen(deleting);
    t.markStuckDeletions(Clock.fixed(now, ZoneOffset.UTC), Duration.ZERO);
    assertFalse(t.isDone(PodRef.of(a)), "skip-wait off: wait for ever");
    t.markStuckDeletions(Clock.fixed(now, ZoneOffset.UTC), Duration.ofSeconds(30));
    assertTrue(t.isDone(PodRef.of(a)));
    assertEquals(List.of("notWaited ns/a"), calls);
    assertEquals(1, t.snapshot(Duration.ofSeconds(30)).notWaited().size());
  }

  @Test
  void awaitDoneWakesWhenThePodGoes() throws Exception {
    DrainTracker t = tracker(false, true);
    Thread other =
        new Thread(
            () -> {
              try {
                Thread.sleep(20);
              } catch (InterruptedException ignored) {
                return;
              }
              t.podDeleted(a);
            });
    other.start();
    assertTrue(t.awaitDone(PodRef.of(a), TimeUnit.SECONDS.toNanos(10)));
    other.join();
    assertFalse(t.awaitDone(PodRef.of(b), TimeUnit.MILLISECONDS.toNanos(10)));
  }
}
