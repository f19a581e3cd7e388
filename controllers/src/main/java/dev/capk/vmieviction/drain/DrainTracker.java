package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of every pod of one drain, fed by the eviction tasks and the watch, read by the
 * orchestrator. One lock and one condition: every change wakes whoever waits (the orchestrator, or
 * a task pausing between retries, which should stop as soon as its pod is gone). A pod's final
 * callback (evicted, deleted, failed, not waited for) is delivered under the lock, so none is lost
 * when the drain returns; listeners must therefore not call back into the drain.
 */
final class DrainTracker implements DeletionWaiter.Events {
  private static final Logger LOG = LoggerFactory.getLogger(DrainTracker.class);

  enum State {
    QUEUED,
    EVICTING,
    BLOCKED,
    ACCEPTED,
    GONE,
    FAILED,
    NOT_WAITED
  }

  enum Step {
    CONTINUE,
    COMPLETE,
    TIMED_OUT,
    WATCH_FAILED
  }

  private static final class Entry {
    final PodRef ref;
    V1Pod latest;
    State state = State.QUEUED;
    Set<String> budgets = Set.of();
    String failure;

    /** The failure is the API server's refusal (401/403) of our request, not the pod's state. */
    boolean denied;

    Entry(V1Pod pod) {
      this.ref = PodRef.of(pod);
      this.latest = pod;
    }
  }

  /** What the result reports. */
  record Snapshot(
      List<PodRef> gone,
      List<PodRef> accepted,
      List<PodRef> pending,
      List<PodRef> pendingTerminating,
      Map<PodRef, String> failed,
      Set<PodRef> denied,
      List<SkippedPod> notWaited,
      Map<PodRef, Set<String>> blockingBudgets) {}

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Map<String, Entry> entries = new LinkedHashMap<>();
  private final String node;
  private final boolean acceptedIsDone;
  private final boolean usingEviction;
  private final DrainProgressListener listener;
  private String watchFailure;

  /**
   * @param acceptedIsDone true in a server dry run: an accepted eviction is the end, nothing will
   *     go
   */
  DrainTracker(
      String node,
      List<V1Pod> pods,
      boolean acceptedIsDone,
      boolean usingEviction,
      DrainProgressListener listener) {
    this.node = node;
    this.acceptedIsDone = acceptedIsDone;
    this.usingEviction = usingEviction;
    this.listener = listener;
    for (V1Pod p : pods) {
      Entry e = new Entry(p);
      entries.put(key(e.ref), e);
    }
  }

  private static String key(PodRef ref) {
    return ref.uid() != null ? ref.uid() : ref.namespace() + "/" + ref.name();
  }

  private static String key(V1Pod pod) {
    return key(PodRef.of(pod));
  }

  private boolean done(Entry e) {
    return switch (e.state) {
      case GONE, FAILED, NOT_WAITED -> true;
      case ACCEPTED -> acceptedIsDone;
      default -> false;
    };
  }

  boolean isDone(PodRef ref) {
    lock.lock();
    try {
      Entry e = entries.get(key(ref));
      return e == null || done(e);
    } finally {
      lock.unlock();
    }
  }

  V1Pod latest(PodRef ref) {
    lock.lock();
    try {
      return entries.get(key(ref)).latest;
    } finally {
      lock.unlock();
    }
  }

  void evicting(PodRef ref) {
    transition(ref, State.EVICTING, null, null);
  }

  void accepted(PodRef ref) {
    transition(ref, State.ACCEPTED, null, null);
  }

  void blocked(PodRef ref, Set<String> budgets) {
    transition(ref, State.BLOCKED, budgets, null);
  }

  /**
   * The API server refused our request for the pod (RBAC): failed, and marked as a permission
   * problem.
   */
  void denied(PodRef ref, String reason) {
    lock.lock();
    try {
      Entry e = entries.get(key(ref));
      if (e != null && !done(e)) {
        e.denied = true;
      }
      failed(ref, reason);
    } finally {
      lock.unlock();
    }
  }

  void failed(PodRef ref, String reason) {
    lock.lock();
    try {
      if (transition(ref, State.FAILED, null, reason)) {
        LOG.info("pod eviction failed node={} pod={} reason={}", node, ref, reason);
        listener.failed(ref, reason);
      }
    } finally {
      lock.unlock();
    }
  }

  void gone(PodRef ref) {
    goneByKey(key(ref));
  }

  private void goneByKey(String key) {
    lock.lock();
    try {
      Entry e = entries.get(key);
      if (e == null
          || e.state == State.GONE
          || e.state == State.FAILED
          || e.state == State.NOT_WAITED) {
        return;
      }
      e.state = State.GONE;
      LOG.debug(
          "pod gone node={} pod={} via={}", node, e.ref, usingEviction ? "eviction" : "deletion");
      // Under the lock: once the orchestrator sees the pod done, its callback has been delivered.
      if (usingEviction) {
        listener.evicted(e.ref);
      } else {
        listener.deleted(e.ref);
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * @return true if the state changed
   */
  private boolean transition(PodRef ref, State to, Set<String> budgets, String failure) {
    lock.lock();
    try {
      Entry e = entries.get(key(ref));
      if (e == null || done(e)) {
        return false;
      }
      e.state = to;
      if (budgets != null) {
        e.budgets = Set.copyOf(budgets);
      }
      if (failure != null) {
        e.failure = failure;
      }
      changed.signalAll();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Waits up to {@code nanos} for the pod to be done. @return true if it is */
  boolean awaitDone(PodRef ref, long nanos) throws InterruptedException {
    lock.lock();
    try {
      long left = nanos;
      while (true) {
        Entry e = entries.get(key(ref));
        if (e == null || done(e)) {
          return true;
        }
        if (left <= 0) {
          return false;
        }
        left = changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * One step of the orchestrator's wait: returns at once if the drain is over, else waits for a
   * change (or {@code tickNanos}) and returns CONTINUE. Checking and waiting under one lock loses
   * no wake-up.
   */
  Step awaitStep(Deadline deadline, long tickNanos) throws InterruptedException {
    lock.lock();
    try {
      if (entries.values().stream().allMatch(this::done)) {
        return Step.COMPLETE;
      }
      if (watchFailure != null) {
        return Step.WATCH_FAILED;
      }
      if (deadline.passed()) {
        return Step.TIMED_OUT;
      }
      changed.awaitNanos(Math.min(tickNanos, deadline.remaining().toNanos()));
      return Step.CONTINUE;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Gives up on pods whose deletion started longer ago than {@code skipWait} (kubectl's
   * skip-wait-for-delete).
   */
  void markStuckDeletions(Clock clock, Duration skipWait) {
    if (skipWait.isZero()) {
      return;
    }
    lock.lock();
    try {
      for (Entry e : entries.values()) {
        if (!done(e) && PodFilters.deletedLongerAgoThan(e.latest, skipWait, clock)) {
          e.state = State.NOT_WAITED;
          LOG.info("pod not waited for node={} pod={} skipWait={}", node, e.ref, skipWait);
          listener.notWaitedFor(e.ref, notWaitedReason(skipWait));
          changed.signalAll();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private static String notWaitedReason(Duration skipWait) {
    return "deletion timestamp older than " + skipWait.toSeconds() + " seconds, not waited for";
  }

  String watchFailure() {
    lock.lock();
    try {
      return watchFailure;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void podSeen(V1Pod pod) {
    lock.lock();
    try {
      Entry e = entries.get(key(pod));
      if (e != null) {
        e.latest = pod;
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Keeps the freshest copy read by a task (a re-read after a refused eviction). */
  void update(V1Pod pod) {
    podSeen(pod);
  }

  @Override
  public void podDeleted(V1Pod pod) {
    goneByKey(key(pod));
  }

  @Override
  public void relisted(List<V1Pod> pods) {
    Set<String> present = new HashSet<>();
    for (V1Pod p : pods) {
      present.add(key(p));
      podSeen(p);
    }
    List<String> vanished = new ArrayList<>();
    lock.lock();
    try {
      for (Map.Entry<String, Entry> e : entries.entrySet()) {
        if (!present.contains(e.getKey())) {
          vanished.add(e.getKey());
        }
      }
    } finally {
      lock.unlock();
    }
    vanished.forEach(this::goneByKey);
  }

  @Override
  public void watchFailed(String reason) {
    lock.lock();
    try {
      watchFailure = reason;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  Snapshot snapshot(Duration skipWait) {
    lock.lock();
    try {
      List<PodRef> gone = new ArrayList<>();
      List<PodRef> accepted = new ArrayList<>();
      List<PodRef> pending = new ArrayList<>();
      List<PodRef> terminating = new ArrayList<>();
      Map<PodRef, String> failed = new TreeMap<>();
      Set<PodRef> denied = new java.util.TreeSet<>();
      List<SkippedPod> notWaited = new ArrayList<>();
      Map<PodRef, Set<String>> blocking = new TreeMap<>();
      for (Entry e : entries.values()) {
        switch (e.state) {
          case GONE -> gone.add(e.ref);
          case FAILED -> {
            failed.put(e.ref, e.failure);
            if (e.denied) {
              denied.add(e.ref);
            }
          }
          case NOT_WAITED -> notWaited.add(new SkippedPod(e.ref, notWaitedReason(skipWait)));
          case ACCEPTED -> {
            if (acceptedIsDone) {
              accepted.add(e.ref);
            } else {
              pending.add(e.ref);
              terminating.add(e.ref);
            }
          }
          case BLOCKED -> {
            pending.add(e.ref);
            blocking.put(e.ref, e.budgets);
          }
          default -> pending.add(e.ref);
        }
      }
      return new Snapshot(
          gone, accepted, pending, terminating, failed, denied, notWaited, blocking);
    } finally {
      lock.unlock();
    }
  }
}
