package dev.capk.vmieviction.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * What a stepped drain of one node remembers between its steps: when each pod that could not go yet
 * is due for its next eviction, why it waits, and how many pods left. Pure bookkeeping, no I/O;
 * losing it (a restart) only means due pods are tried again at once.
 *
 * <p>Retry schedule: a pod refused by a budget (or a terminating namespace) is tried again after
 * kubectl's retry interval, and the wait doubles for each further refusal up to {@code maxRetry}:
 * quick while a rolling budget frees a slot, cheap while a budget never allows anything. The API
 * server's Retry-After is honoured as given; transient failures back off from 200 ms.
 *
 * <p>Not thread-safe: the steps of one drain run one at a time (a work queue never hands one key to
 * two workers at once).
 */
public final class DrainMemory {

  /**
   * Consecutive transient failures (connection, 5xx) before a pod is reported failed (it is still
   * retried): with the backoff below (0.2 s doubling, at most 5 s) a drain rides out about 30 s of
   * API server outage first.
   */
  static final int MAX_TRANSIENT_FAILURES = 10;

  /** Why a pod waits. */
  enum Waiting {
    /** Eviction accepted: the pod is being deleted; its disappearance ends the wait. */
    ACCEPTED,
    BLOCKED,
    THROTTLED,
    NAMESPACE_TERMINATING,
    TRANSIENT,
    FAILED
  }

  /** One pod's state between steps. */
  static final class PodState {
    Waiting waiting;
    Instant due;
    int refusals;
    int transientFailures;
    Set<String> budgets = Set.of();
    String failure;
    boolean denied;

    /** A budget that refused it allows a disruption again: due before its timer. */
    boolean woken;
  }

  private final Duration baseRetry;
  private final Duration maxRetry;
  private final Map<PodRef, PodState> pods = new HashMap<>();
  private final Set<PodRef> evicted = new TreeSet<>();

  /** The eviction API version, discovered once per drain; null until then. */
  private Optional<String> evictionVersion;

  private DaemonSetLookup daemonSets;

  /**
   * @param baseRetry the first wait after a refusal (kubectl: 5 s)
   * @param maxRetry the longest wait between two evictions of a refused pod
   */
  public DrainMemory(Duration baseRetry, Duration maxRetry) {
    if (baseRetry.isNegative() || baseRetry.isZero() || maxRetry.compareTo(baseRetry) < 0) {
      throw new IllegalArgumentException(
          "need 0 < baseRetry <= maxRetry, got " + baseRetry + ", " + maxRetry);
    }
    this.baseRetry = baseRetry;
    this.maxRetry = maxRetry;
  }

  /** True if the pod may be sent an eviction now: its timer came, or its budget woke it. */
  boolean due(PodRef pod, Instant now) {
    PodState s = pods.get(pod);
    return s == null || s.woken || !now.isBefore(s.due);
  }

  /**
   * True if the pod's retry timer (not a budget's wake) makes it due now, or it was never tried.
   */
  boolean timerDue(PodRef pod, Instant now) {
    PodState s = pods.get(pod);
    return s == null || !now.isBefore(s.due);
  }

  PodState state(PodRef pod) {
    return pods.get(pod);
  }

  /** Forgets pods that are no longer on the node. */
  void keepOnly(Set<PodRef> present) {
    pods.keySet().retainAll(present);
  }

  void accepted(PodRef pod, Instant now) {
    PodState s = fresh(pod);
    s.waiting = Waiting.ACCEPTED;
    // The watch shows the deletion within moments; re-send only if it never does.
    s.due = now.plus(baseRetry);
    evicted.add(pod);
  }

  void gone(PodRef pod) {
    pods.remove(pod);
    evicted.add(pod);
  }

  void refused(PodRef pod, Waiting why, Set<String> budgets, Instant now) {
    PodState s = waitFor(pod, why, budgets);
    s.due = now.plus(refusalWait(s.refusals++));
  }

  /**
   * Not sent: the known status of {@code budgets} allows no more disruptions now. The pod waits as
   * if refused, for its budget's wake or for its timer (set as a refusal would, if it had come).
   */
  void held(PodRef pod, Set<String> budgets, Instant now) {
    PodState s = waitFor(pod, Waiting.BLOCKED, budgets);
    if (s.due == null || !now.isBefore(s.due)) {
      s.due = now.plus(refusalWait(s.refusals++));
    }
  }

  /** The pod waits for {@code why} (a refusal, not a failure) on {@code budgets}. */
  private PodState waitFor(PodRef pod, Waiting why, Set<String> budgets) {
    PodState s = pods.computeIfAbsent(pod, p -> new PodState());
    s.waiting = why;
    s.transientFailures = 0;
    s.failure = null;
    s.denied = false;
    s.budgets = Set.copyOf(budgets);
    s.woken = false;
    return s;
  }

  void throttled(PodRef pod, long retryAfterSeconds, Instant now) {
    PodState s = pods.computeIfAbsent(pod, p -> new PodState());
    s.waiting = Waiting.THROTTLED;
    s.woken = false;
    s.due = now.plusSeconds(Math.max(1, retryAfterSeconds));
  }

  /**
   * @return true once the pod failed this often in a row that it is reported failed
   */
  boolean transientFailure(PodRef pod, String message, Instant now) {
    PodState s = pods.computeIfAbsent(pod, p -> new PodState());
    s.transientFailures++;
    s.woken = false;
    // Kept for the messages that say why the pod is still there.
    s.failure = message;
    s.due = now.plusMillis(Math.min(5_000L, 200L << Math.min(20, s.transientFailures - 1)));
    if (s.transientFailures > MAX_TRANSIENT_FAILURES) {
      s.waiting = Waiting.FAILED;
      return true;
    }
    s.waiting = Waiting.TRANSIENT;
    return false;
  }

  /** Retrying cannot help soon: reported failed, tried again after the longest wait. */
  void failed(PodRef pod, String reason, boolean denied, Instant now) {
    PodState s = pods.computeIfAbsent(pod, p -> new PodState());
    s.waiting = Waiting.FAILED;
    s.failure = reason;
    s.denied = denied;
    s.woken = false;
    s.due = now.plus(maxRetry);
  }

  /**
   * The budgets {@code namespace/name} allow a disruption now: the pods they refused are due at
   * once (their refusal count and timer stay, so a budget that refuses again backs off as before,
   * and a pod the step does not send, its budget's disruptions taken by others, waits for its
   * timer).
   */
  public void budgetsAllow(Set<String> budgets) {
    if (budgets.isEmpty()) {
      return;
    }
    pods.forEach(
        (pod, s) -> {
          if (s.waiting == Waiting.BLOCKED
              && s.budgets.stream()
                  .anyMatch(
                      b -> budgets.contains(b.contains("/") ? b : pod.namespace() + "/" + b))) {
            s.woken = true;
          }
        });
  }

  /** 5 s, 10 s, 20 s, ... up to the maximum. */
  Duration refusalWait(int earlierRefusals) {
    Duration wait = baseRetry;
    for (int i = 0; i < earlierRefusals && wait.compareTo(maxRetry) < 0; i++) {
      wait = wait.multipliedBy(2);
    }
    return wait.compareTo(maxRetry) > 0 ? maxRetry : wait;
  }

  /** Pods evicted (or found gone) by this drain so far. */
  public int evictedCount() {
    return evicted.size();
  }

  Optional<String> evictionVersion() {
    return evictionVersion;
  }

  boolean evictionDiscovered() {
    return evictionVersion != null;
  }

  void evictionVersion(Optional<String> version) {
    this.evictionVersion = version;
  }

  DaemonSetLookup daemonSets(Supplier<DaemonSetLookup> create) {
    if (daemonSets == null) {
      daemonSets = create.get();
    }
    return daemonSets;
  }

  private PodState fresh(PodRef pod) {
    PodState s = new PodState();
    pods.put(pod, s);
    return s;
  }
}
