package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * Evicts one pod, retrying as kubectl does: every retry interval while a PodDisruptionBudget
 * refuses (re-reading the pod first: it may be gone or replaced), while its namespace is
 * terminating (unless it is already being deleted: then there is nothing to do but wait), and a few
 * times on transient errors. Ends when the request is accepted, the pod is gone, it fails for good,
 * or the drain's deadline passes.
 */
final class PodEvictionTask implements Runnable {
  /**
   * Consecutive transient failures (connection, 5xx) before the pod is reported failed: with the
   * backoff below (0.2 s doubling, at most 5 s) the drain rides out about 30 s of API server
   * outage.
   */
  static final int MAX_TRANSIENT_FAILURES = 10;

  private final PodRef ref;
  private final Evictor evictor;
  private final DrainTracker tracker;
  private final BudgetResolver budgets;
  private final PodReader reader;
  private final Deadline deadline;
  private final Duration retryInterval;
  private final DrainProgressListener listener;

  PodEvictionTask(
      V1Pod pod,
      Evictor evictor,
      DrainTracker tracker,
      BudgetResolver budgets,
      PodReader reader,
      Deadline deadline,
      Duration retryInterval,
      DrainProgressListener listener) {
    this.ref = PodRef.of(pod);
    this.evictor = evictor;
    this.tracker = tracker;
    this.budgets = budgets;
    this.reader = reader;
    this.deadline = deadline;
    this.retryInterval = retryInterval;
    this.listener = listener;
  }

  @Override
  public void run() {
    try {
      evict();
    } catch (InterruptedException e) {
      // The drain is over (timeout, completion elsewhere): leave the pod's state as it is.
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      tracker.failed(ref, "unexpected error: " + e);
    }
  }

  private void evict() throws InterruptedException {
    int transientFailures = 0;
    boolean announced = false;
    while (!tracker.isDone(ref) && !deadline.passed()) {
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedException();
      }
      if (!announced) {
        listener.evicting(ref, evictor.usingEviction());
        tracker.evicting(ref);
        announced = true;
      }
      EvictionOutcome o = evictor.evictOrDelete(ref, deadline);
      if (o.kind() != EvictionOutcome.Kind.TRANSIENT) {
        transientFailures = 0;
      }
      switch (o.kind()) {
        case ACCEPTED -> {
          tracker.accepted(ref);
          return;
        }
        case GONE, REPLACED -> {
          tracker.gone(ref);
          return;
        }
        case BLOCKED -> {
          Set<String> names =
              o.budgets().isEmpty() ? budgets.budgetsSelecting(tracker.latest(ref)) : o.budgets();
          tracker.blocked(ref, names);
          listener.blocked(ref, names, o.message());
          if (pause(retryInterval) || refreshShowsGone()) {
            return;
          }
        }
        case THROTTLED -> {
          if (pause(Duration.ofSeconds(Math.max(1, o.retryAfterSeconds())))) {
            return;
          }
        }
        case NAMESPACE_TERMINATING -> {
          V1Pod latest = tracker.latest(ref);
          if (latest.getMetadata() != null && latest.getMetadata().getDeletionTimestamp() != null) {
            // The eviction API will never succeed here, but the pod is already going.
            tracker.accepted(ref);
            return;
          }
          listener.retrying(
              ref, "namespace " + ref.namespace() + " is terminating: " + o.message());
          if (pause(retryInterval) || refreshShowsGone()) {
            return;
          }
        }
        case MULTIPLE_BUDGETS -> {
          tracker.failed(
              ref,
              "more than one PodDisruptionBudget selects pod "
                  + ref
                  + ", which the eviction API does not support: "
                  + o.message());
          return;
        }
        case TRANSIENT -> {
          transientFailures++;
          if (transientFailures > MAX_TRANSIENT_FAILURES) {
            tracker.failed(ref, o.message());
            return;
          }
          listener.retrying(ref, o.message());
          if (pause(Duration.ofMillis(Math.min(5_000L, 200L << (transientFailures - 1))))) {
            return;
          }
        }
        case FORBIDDEN -> {
          // The server's message names the user; ours names what was refused.
          String request = evictor.usingEviction() ? "create pods/eviction" : "delete pods";
          tracker.denied(ref, request + " denied: " + o.message());
          return;
        }
        case FAILED -> {
          tracker.failed(ref, o.message());
          return;
        }
      }
    }
  }

  /** Waits {@code d} (less if the deadline comes first). @return true if the task should stop */
  private boolean pause(Duration d) throws InterruptedException {
    if (tracker.awaitDone(ref, deadline.cap(d).toNanos())) {
      return true;
    }
    return deadline.passed();
  }

  /** Reads the pod again. @return true if it is gone or replaced by a namesake */
  private boolean refreshShowsGone() {
    try {
      Optional<V1Pod> now = reader.read(ref);
      if (now.isEmpty()
          || (ref.uid() != null && !ref.uid().equals(now.get().getMetadata().getUid()))) {
        tracker.gone(ref);
        return true;
      }
      tracker.update(now.get());
    } catch (ApiException e) {
      // Could not look: try the eviction again with what we know; it answers for itself.
    }
    return false;
  }
}
