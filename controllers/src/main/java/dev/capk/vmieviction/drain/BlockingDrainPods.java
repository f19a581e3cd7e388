package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where each pod of one blocking drain ({@link NodeDrainer#drain}) stands, told by the steps'
 * eviction requests and answers and by the node's pod list: turns each change into the one {@link
 * DrainProgressListener} call that kubectl's output line comes from, and the end into a {@link
 * DrainResult}. Pure bookkeeping, on the drain's thread only; a listener that throws is logged and
 * ignored, since reporting must never break a drain.
 *
 * <p>A pod is followed by its UID: one that is recreated under its name (StatefulSet) is gone.
 */
final class BlockingDrainPods implements DrainStepper.Observer {
  private static final Logger LOG = LoggerFactory.getLogger(BlockingDrainPods.class);

  enum State {
    /** Still the stepper's: its eviction is due, refused, or failing for now. */
    WAITING,
    /** Its eviction was accepted: the drain waits for it to go (in a server dry run: done). */
    ACCEPTED,
    GONE,
    FAILED,
    NOT_WAITED
  }

  private static final class Pod {
    final PodRef ref;
    V1Pod latest;
    State state = State.WAITING;
    boolean announced;
    String failure;

    Pod(V1Pod pod) {
      this.ref = PodRef.of(pod);
      this.latest = pod;
    }
  }

  private final Map<String, Pod> pods = new LinkedHashMap<>();
  private final DrainMemory memory;
  private final DrainOptions options;
  private final DrainProgressListener listener;
  private final Clock clock;
  private final boolean serverDryRun;

  BlockingDrainPods(List<V1Pod> toEvict, DrainMemory memory, DrainOptions options, Clock clock) {
    toEvict.forEach(p -> pods.put(key(PodRef.of(p)), new Pod(p)));
    this.memory = memory;
    this.options = options;
    this.listener = options.progressListener();
    this.clock = clock;
    this.serverDryRun = options.dryRun() == DryRun.SERVER;
  }

  /** Calls the caller's listener; its failure is logged, never the drain's. */
  static void tell(String callback, Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      LOG.warn("drain progress listener failed callback={} error={}", callback, e.toString());
    }
  }

  /** Evictions, unless disabled or (as discovered by the first request) not served. */
  boolean usingEviction() {
    return memory.evictionDiscovered()
        ? memory.evictionVersion().isPresent()
        : !options.disableEviction();
  }

  @Override
  public void sending(PodRef ref) {
    Pod p = pods.get(key(ref));
    if (p != null) {
      announce(p);
    }
  }

  @Override
  public void answered(PodRef ref, EvictionOutcome o) {
    Pod p = pods.get(key(ref));
    if (p == null || p.state != State.WAITING) {
      return;
    }
    // The stepper has remembered the answer: its budgets and failures are in the memory.
    DrainMemory.PodState s = memory.state(ref);
    switch (o.kind()) {
      case ACCEPTED -> p.state = State.ACCEPTED;
      case GONE, REPLACED -> gone(p);
      case BLOCKED -> tell("blocked", () -> listener.blocked(ref, s.budgets, o.message()));
      case NAMESPACE_TERMINATING ->
          tell(
              "retrying",
              () ->
                  listener.retrying(
                      ref, "namespace " + ref.namespace() + " is terminating: " + o.message()));
      case TRANSIENT -> {
        if (s.waiting == DrainMemory.Waiting.FAILED) {
          fail(p, s.failure);
        } else {
          tell("retrying", () -> listener.retrying(ref, o.message()));
        }
      }
      // The server asked to come back later (Retry-After): kubectl says nothing either.
      case THROTTLED -> {}
      case MULTIPLE_BUDGETS, FORBIDDEN, FAILED -> fail(p, s.failure);
    }
  }

  /**
   * The node's pods now (from the watch): a followed pod missing from them is gone; one deleted
   * longer ago than the skip-wait timeout is no longer waited for.
   */
  void seen(List<V1Pod> onNode) {
    Map<String, V1Pod> byKey = new LinkedHashMap<>();
    onNode.forEach(v -> byKey.put(key(PodRef.of(v)), v));
    Duration skipWait = options.skipWaitForDeleteTimeout();
    for (Map.Entry<String, Pod> e : pods.entrySet()) {
      Pod p = e.getValue();
      if (done(p)) {
        continue;
      }
      V1Pod now = byKey.get(e.getKey());
      if (now == null) {
        gone(p);
      } else if (PodFilters.deletedLongerAgoThan(now, skipWait, clock)) {
        p.state = State.NOT_WAITED;
        LOG.info("pod not waited for pod={} skipWait={}", p.ref, skipWait);
        tell("notWaitedFor", () -> listener.notWaitedFor(p.ref, notWaitedReason()));
      } else {
        p.latest = now;
        if (terminating(now)) {
          alreadyGoing(p);
        }
      }
    }
  }

  /**
   * A pod someone else is deleting gets no eviction from the stepper; kubectl would send it one
   * (which the API server accepts, the pod going anyway) and print its line, so it is announced.
   */
  private void alreadyGoing(Pod p) {
    announce(p);
    if (serverDryRun) {
      p.state = State.ACCEPTED;
    }
  }

  /** Pods a step found it may no longer evict: failed, since some of their peers already went. */
  void refused(DrainRefusedException e) {
    e.refusals()
        .forEach(
            (reason, refs) ->
                refs.forEach(
                    ref -> {
                      Pod p = pods.get(key(ref));
                      if (p != null && p.state == State.WAITING) {
                        fail(p, reason);
                      }
                    }));
  }

  /** The pods that still need an eviction, as last seen: the next step's. */
  List<V1Pod> sendable() {
    return pods.values().stream().filter(p -> p.state == State.WAITING).map(p -> p.latest).toList();
  }

  boolean complete() {
    return pods.values().stream().allMatch(this::done);
  }

  private boolean done(Pod p) {
    return switch (p.state) {
      case GONE, FAILED, NOT_WAITED -> true;
      case ACCEPTED -> serverDryRun;
      case WAITING -> false;
    };
  }

  /** What the drain's result says of the pods followed; the rest is the caller's. */
  record Outcome(
      List<PodRef> evicted,
      List<SkippedPod> notWaited,
      List<PodRef> pending,
      List<PodRef> terminating,
      Map<PodRef, String> failed,
      Map<PodRef, Set<String>> blockingBudgets) {}

  Outcome outcome() {
    List<PodRef> evicted = new ArrayList<>();
    List<SkippedPod> notWaited = new ArrayList<>();
    List<PodRef> pending = new ArrayList<>();
    List<PodRef> terminating = new ArrayList<>();
    Map<PodRef, String> failed = new TreeMap<>();
    Map<PodRef, Set<String>> blocking = new TreeMap<>();
    for (Pod p : pods.values()) {
      switch (p.state) {
        case GONE -> evicted.add(p.ref);
        case FAILED -> failed.put(p.ref, p.failure);
        case NOT_WAITED -> notWaited.add(new SkippedPod(p.ref, notWaitedReason()));
        case ACCEPTED -> {
          if (serverDryRun) {
            evicted.add(p.ref);
          } else {
            pending.add(p.ref);
            terminating.add(p.ref);
          }
        }
        case WAITING -> {
          pending.add(p.ref);
          DrainMemory.PodState s = memory.state(p.ref);
          if (terminating(p.latest)) {
            terminating.add(p.ref);
          } else if (s != null && s.waiting == DrainMemory.Waiting.BLOCKED) {
            blocking.put(p.ref, s.budgets);
          }
        }
      }
    }
    return new Outcome(evicted, notWaited, pending, terminating, failed, blocking);
  }

  private void announce(Pod p) {
    if (!p.announced) {
      p.announced = true;
      boolean eviction = usingEviction();
      tell("evicting", () -> listener.evicting(p.ref, eviction));
    }
  }

  private void gone(Pod p) {
    p.state = State.GONE;
    if (usingEviction()) {
      tell("evicted", () -> listener.evicted(p.ref));
    } else {
      tell("deleted", () -> listener.deleted(p.ref));
    }
  }

  private void fail(Pod p, String reason) {
    p.state = State.FAILED;
    p.failure = reason;
    LOG.info("pod eviction failed pod={} reason={}", p.ref, reason);
    tell("failed", () -> listener.failed(p.ref, reason));
  }

  private String notWaitedReason() {
    return "deletion timestamp older than "
        + options.skipWaitForDeleteTimeout().toSeconds()
        + " seconds, not waited for";
  }

  private static boolean terminating(V1Pod pod) {
    return pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null;
  }

  private static String key(PodRef ref) {
    return ref.uid() != null ? ref.uid() : ref.namespace() + "/" + ref.name();
  }

  /** The pod's latest state, for tests. */
  Optional<State> state(PodRef ref) {
    return Optional.ofNullable(pods.get(key(ref))).map(p -> p.state);
  }
}
