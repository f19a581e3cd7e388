package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One blocking drain ({@link NodeDrainer#drain}) once the node is cordoned and its pods planned:
 * steps the drain ({@link DrainStepper}, the engine the controller uses) and, between steps, waits
 * for the node's pod watch to show pods leaving or for the next eviction to be due, never past the
 * drain's deadline. Follows where each pod stands, told by the steps' eviction answers and by the
 * node's pods, turns each change into the one {@link DrainProgressListener} call that kubectl's
 * output line comes from, and the end into a {@link DrainResult}. A listener that throws is logged
 * and ignored, since reporting must never break a drain.
 *
 * <p>A pod is followed by its UID: one that is recreated under its name (StatefulSet) is gone.
 */
final class BlockingDrain implements DrainStepper.Observer {
  private static final Logger LOG = LoggerFactory.getLogger(BlockingDrain.class);

  /** The longest wait between two looks: skip-wait ages grow without any event to say so. */
  private static final Duration TICK = Duration.ofSeconds(1);

  enum State {
    /** Still the stepper's: its eviction is due, refused, or failing for now. */
    WAITING,
    /** Its eviction was accepted: the drain waits for it to go (in a dry run: done). */
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

  private final RawApi api;
  private final String node;
  private final DrainPlan plan;
  private final Map<String, Pod> pods = new LinkedHashMap<>();
  private final DrainMemory memory;
  private final DrainOptions options;
  private final DrainProgressListener listener;
  private final Clock clock;
  private final boolean dryRun;
  private final Semaphore wake = new Semaphore(0);
  private boolean timedOut;
  private Optional<String> interruption = Optional.empty();

  /**
   * @param api bound to the drain's deadline
   */
  BlockingDrain(
      RawApi api,
      String node,
      DrainPlan plan,
      DrainMemory memory,
      DrainOptions options,
      Clock clock) {
    this.api = api;
    this.node = node;
    this.plan = plan;
    plan.toEvict().forEach(p -> pods.put(key(PodRef.of(p)), new Pod(p)));
    this.memory = memory;
    this.options = options;
    this.listener = options.progressListener();
    this.clock = clock;
    this.dryRun = options.dryRun() != DryRun.NONE;
  }

  /** Calls the caller's listener; its failure is logged, never the drain's. */
  static void tell(String callback, Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      LOG.warn("drain progress listener failed callback={} error={}", callback, e.toString());
    }
  }

  /**
   * Evicts the plan's pods and waits until they are gone, the deadline passes, or the watch is
   * lost. The watch starts from {@code seed}, the plan's list, so no deletion slips past it.
   *
   * @throws ApiException if eviction support could not be discovered
   */
  void run(Deadline deadline, V1PodList seed) throws ApiException {
    // Evictions of one step side by side, no more than the options allow.
    ExecutorService evictions =
        Executors.newFixedThreadPool(
            Math.max(1, Math.min(options.maxConcurrentEvictions(), pods.size())),
            new ThreadFactoryBuilder()
                .setNameFormat("drain-" + node.replace("%", "%%") + "-evict-%d")
                .setDaemon(true)
                .build());
    DrainStepper stepper = new DrainStepper(api.client(), evictions, clock);
    try (NodePodWatch watch = NodePodWatch.start(api, node, wake::release, seed)) {
      while (true) {
        watch.pods().ifPresent(this::seen);
        if (complete()) {
          return;
        }
        if (watch.failure().isPresent()) {
          interruption = watch.failure();
          return;
        }
        if (deadline.passed()) {
          timedOut = true;
          return;
        }
        await(step(stepper, deadline), deadline);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      interruption = Optional.of("interrupted");
    } finally {
      evictions.shutdownNow();
    }
  }

  /** A client dry run: every planned pod would go, nothing is sent. */
  void wouldAllGo() {
    pods.values()
        .forEach(
            p -> {
              announce(p);
              p.state = State.ACCEPTED;
            });
  }

  /** One step over the pods that still need an eviction; when the next one is due. */
  private Optional<Instant> step(DrainStepper stepper, Deadline deadline) throws ApiException {
    List<V1Pod> sendable = sendable();
    if (sendable.isEmpty()) {
      // Only deletions are awaited: the watch says when.
      return Optional.empty();
    }
    // Each step's requests end by the drain's deadline, not a full timeout after the step began.
    Duration left = deadline.none() ? Duration.ZERO : deadline.remaining();
    DrainOptions bounded =
        options.toBuilder().timeout(left.isZero() ? left : max(left, Duration.ofMillis(1))).build();
    try {
      return stepper.step(node, sendable, bounded, memory, BudgetAllowance.UNKNOWN, this).nextTry();
    } catch (DrainRefusedException e) {
      // Pods that changed since the plan (the plan refuses none of them before any eviction).
      refused(e);
      return Optional.empty();
    }
  }

  /** Waits for pods to leave, for {@code next}, or a tick, whichever comes first. */
  private void await(Optional<Instant> next, Deadline deadline) throws InterruptedException {
    Duration wait = TICK;
    if (next.isPresent()) {
      Duration untilNext = Duration.between(clock.instant(), next.get());
      wait = untilNext.compareTo(wait) < 0 ? untilNext : wait;
    }
    wait = deadline.cap(wait);
    if (!wait.isNegative() && !wait.isZero()) {
      wake.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
    }
    // Several wake-ups while stepping ask for one look, not one each.
    wake.drainPermits();
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
          // Someone else deletes it, so the stepper sends no eviction; kubectl would send one
          // (accepted, the pod going anyway) and print its line, so it is announced.
          announce(p);
          if (dryRun) {
            p.state = State.ACCEPTED;
          }
        }
      }
    }
  }

  /** Pods a step found it may no longer evict: failed, since some of their peers already went. */
  private void refused(DrainRefusedException e) {
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
      case ACCEPTED -> dryRun;
      case WAITING -> false;
    };
  }

  /** How the drain ended: the plan's verdicts and where each followed pod stands. */
  DrainResult result(boolean cordoned, Duration elapsed) {
    List<PodRef> evicted = new ArrayList<>();
    List<SkippedPod> skipped = new ArrayList<>(plan.skipped());
    List<PodRef> pending = new ArrayList<>();
    List<PodRef> terminating = new ArrayList<>();
    Map<PodRef, String> failed = new TreeMap<>();
    Map<PodRef, Set<String>> blocking = new TreeMap<>();
    for (Pod p : pods.values()) {
      switch (p.state) {
        case GONE -> evicted.add(p.ref);
        case FAILED -> failed.put(p.ref, p.failure);
        case NOT_WAITED -> skipped.add(new SkippedPod(p.ref, notWaitedReason()));
        case ACCEPTED -> {
          if (dryRun) {
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
    return new DrainResult(
        node,
        options.dryRun(),
        cordoned,
        usingEviction(),
        evicted,
        skipped,
        pending,
        terminating,
        failed,
        blocking,
        plan.warningLines(),
        timedOut && !pending.isEmpty(),
        interruption,
        elapsed);
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

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** The pod's latest state, for tests. */
  Optional<State> state(PodRef ref) {
    return Optional.ofNullable(pods.get(key(ref))).map(p -> p.state);
  }
}
