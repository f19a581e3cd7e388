package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainStepper.EvictionOutcome;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.NodePodWatch;
import dev.capk.vmieviction.drain.SteppedDrains.PodLister;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drains a cordoned node the way {@code kubectl drain} does, for the CLI: list the node's pods,
 * give each a verdict (refusing the whole drain if any pod may not go), then step the controller's
 * engine ({@link DrainStepper}) until the pods are gone, waiting between steps on one watch of the
 * node's pods or for the next eviction to be due. Faster than kubectl: evictions run concurrently
 * (bounded), and the watch replaces kubectl's per-pod polling. Thread-safe: one instance can drain
 * several nodes at once. It knows nothing about VMIs.
 */
public final class NodeDrainer {
  private static final Logger LOG = LoggerFactory.getLogger(NodeDrainer.class);

  /**
   * Runs the evictions of every drain's steps. Unbounded: a step sends no more than the options'
   * maxConcurrentEvictions and waits for their answers before it returns.
   */
  private static final ExecutorService EVICTIONS =
      Executors.newCachedThreadPool(
          new ThreadFactoryBuilder().setNameFormat("drain-evict-%d").setDaemon(true).build());

  private final RawApi api;
  private final Clock clock = Clock.systemUTC();

  public NodeDrainer(ApiClient client) {
    this.api = new RawApi(Objects.requireNonNull(client, "client"));
  }

  /**
   * Evicts the pods of a node the caller has resolved and cordoned (kubectl's drain command cordons
   * every node before it drains any), blocking until they are gone or the options' timeout passes,
   * telling {@code listener} of the plan and of each pod's progress. A timeout, a pod that cannot
   * be evicted, or a lost API server is reported in the result; only a refusal (nothing evicted)
   * and failures before any eviction (cannot list pods) throw.
   *
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted
   * @throws ApiException if listing the pods or discovering eviction support failed
   */
  public DrainResult drain(String nodeName, DrainOptions options, DrainProgressListener listener)
      throws ApiException, DrainRefusedException {
    if (nodeName == null || nodeName.isBlank()) {
      // A blank name would select the unscheduled pods of the whole cluster.
      throw new IllegalArgumentException("node name must not be empty");
    }
    Objects.requireNonNull(listener, "listener");
    long started = System.nanoTime();
    // As kubectl's --timeout: zero means no timeout.
    Deadline deadline =
        options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    // Every request of this drain ends by its deadline, however slowly the server answers.
    RawApi api = this.api.until(deadline);
    LOG.info("drain started node={} options={}", nodeName, options);
    PodLister.Listing listing =
        new PodLister(api).list(nodeName, options.podSelector(), options.chunkSize());
    // kubectl retries a refused eviction at one fixed interval: no backoff beyond it.
    DrainMemory memory =
        new DrainMemory(options.evictionRetryInterval(), options.evictionRetryInterval());
    // The plan's DaemonSet answers are kept in the memory, for the steps that plan again.
    PodFilters filters =
        new PodFilters(options, memory.daemonSets(() -> PodFilters.daemonSets(api)), clock);
    DrainPlan plan = DrainPlan.of(filters.inOrder(), listing.pods());
    if (plan.refused()) {
      DrainRefusedException refused = new DrainRefusedException(nodeName, plan.refusals());
      LOG.info("drain refused node={} reason={}", nodeName, refused.getMessage());
      throw refused;
    }
    BlockingDrain.tell(
        () -> listener.planned(plan.toEvictRefs(), plan.skipped(), plan.warningLines()));
    BlockingDrain drain = new BlockingDrain(api, nodeName, plan, memory, options, listener, clock);
    if (options.dryRun() == DryRun.CLIENT) {
      drain.wouldAllGo();
    } else if (!drain.complete()) {
      V1PodList seed =
          new V1PodList()
              .metadata(new V1ListMeta().resourceVersion(listing.resourceVersion()))
              .items(listing.pods());
      drain.run(deadline, seed);
    }
    DrainResult done = drain.result();
    LOG.info(
        "drain finished node={} summary={} ms={}",
        nodeName,
        done,
        Duration.ofNanos(System.nanoTime() - started).toMillis());
    return done;
  }

  /**
   * One blocking drain once the node is cordoned and its pods planned: steps the drain ({@link
   * DrainStepper}) and, between steps, waits for the node's pod watch to show pods leaving or for
   * the next eviction to be due, never past the deadline. The stepper's memory keeps each pod's
   * retries, budgets and failures; this loop keeps only what kubectl's output needs: the pods still
   * awaited (by UID: a namesake a StatefulSet recreates is another pod), and how the others ended.
   * A listener that throws is logged and ignored, since reporting must never break a drain.
   */
  static final class BlockingDrain implements DrainStepper.Observer {
    /** The longest wait between two looks: skip-wait ages grow without any event to say so. */
    private static final Duration TICK = Duration.ofSeconds(1);

    private final RawApi api;
    private final String node;
    private final DrainMemory memory;
    private final DrainOptions options;
    private final DrainProgressListener listener;
    private final Clock clock;
    private final Semaphore wake = new Semaphore(0);

    /** The pods still awaited, as last seen (a namesake, with another UID, is another pod). */
    private final Map<PodRef, V1Pod> left = new LinkedHashMap<>();

    private final Set<PodRef> announced = new HashSet<>();
    private final List<PodRef> evicted = new ArrayList<>();
    private final Map<PodRef, String> failed = new TreeMap<>();
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
        DrainProgressListener listener,
        Clock clock) {
      this.api = api;
      this.node = node;
      plan.toEvict().forEach(p -> left.put(PodRef.of(p), p));
      this.memory = memory;
      this.options = options;
      this.listener = listener;
      this.clock = clock;
    }

    /** Calls the caller's listener; its failure is logged, never the drain's. */
    static void tell(Runnable call) {
      try {
        call.run();
      } catch (RuntimeException e) {
        LOG.warn("drain progress listener failed error={}", e.toString());
      }
    }

    /**
     * Evicts the plan's pods and waits until they are gone, the deadline passes, or the watch is
     * lost. The watch starts from {@code seed}, the plan's list, so no deletion slips past it.
     *
     * @throws ApiException if eviction support could not be discovered
     */
    void run(Deadline deadline, V1PodList seed) throws ApiException {
      DrainStepper stepper = new DrainStepper(api.client(), EVICTIONS, clock);
      try (NodePodWatch watch = NodePodWatch.start(api, node, wake::release, seed)) {
        while (true) {
          watch.pods().ifPresent(this::seen);
          if (complete()) {
            return;
          }
          interruption = watch.failure();
          timedOut = deadline.passed();
          if (interruption.isPresent() || timedOut) {
            return;
          }
          Duration wait =
              step(stepper, deadline).map(n -> Duration.between(clock.instant(), n)).orElse(TICK);
          wait = deadline.cap(wait.compareTo(TICK) < 0 ? wait : TICK);
          if (!wait.isNegative() && !wait.isZero()) {
            wake.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
          }
          // Several wake-ups while stepping ask for one look, not one each.
          wake.drainPermits();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        interruption = Optional.of("interrupted");
      }
    }

    /** A client dry run: every planned pod would go, nothing is sent. */
    void wouldAllGo() {
      left.keySet().forEach(this::done);
      left.clear();
    }

    /** One step over the pods still awaited; when the next eviction is due. */
    private Optional<Instant> step(DrainStepper stepper, Deadline deadline) throws ApiException {
      try {
        // Each step's requests end by the drain's deadline, not a full timeout after it began.
        return stepper
            .step(node, sendable(), options, memory, BudgetWatch.NONE, this, deadline)
            .nextTry();
      } catch (DrainRefusedException e) {
        // Pods that changed since the plan may no longer go: failed, since some peers already went.
        e.refusals().forEach((reason, refs) -> refs.forEach(ref -> fail(ref, reason)));
        return Optional.empty();
      }
    }

    @Override
    public void sending(PodRef ref) {
      announce(ref);
    }

    @Override
    public void answered(PodRef ref, EvictionOutcome o) {
      if (!left.containsKey(ref)) {
        return;
      }
      // The stepper has remembered the answer: its budgets and failures are in the memory.
      DrainMemory.PodState s = memory.state(ref);
      switch (o.kind()) {
        case ACCEPTED -> {
          if (options.dryRun() != DryRun.NONE) {
            left.remove(ref);
            done(ref);
          }
        }
        case GONE, REPLACED -> gone(ref);
        case BLOCKED -> tell(() -> listener.blocked(ref, s.budgets, o.message()));
        case NAMESPACE_TERMINATING ->
            tell(
                () ->
                    listener.retrying(
                        ref, "namespace " + ref.namespace() + " is terminating: " + o.message()));
        case TRANSIENT -> {
          if (s.waiting == EvictionOutcome.Kind.FAILED) {
            fail(ref, s.failure);
          } else {
            tell(() -> listener.retrying(ref, o.message()));
          }
        }
        // The server asked to come back later (Retry-After): kubectl says nothing either.
        case THROTTLED -> {}
        case MULTIPLE_BUDGETS, FORBIDDEN, FAILED -> fail(ref, s.failure);
      }
    }

    /**
     * The node's pods now (from the watch): an awaited pod missing from them is gone; one deleted
     * longer ago than the skip-wait timeout is no longer waited for.
     */
    void seen(List<V1Pod> onNode) {
      Map<PodRef, V1Pod> byRef = new HashMap<>();
      onNode.forEach(v -> byRef.put(PodRef.of(v), v));
      for (PodRef ref : List.copyOf(left.keySet())) {
        V1Pod now = byRef.get(ref);
        if (now == null) {
          gone(ref);
        } else if (PodFilters.deletedLongerAgoThan(
            now, options.skipWaitForDeleteTimeout(), clock)) {
          String reason =
              "deletion timestamp older than "
                  + options.skipWaitForDeleteTimeout().toSeconds()
                  + " seconds, not waited for";
          left.remove(ref);
          tell(() -> listener.notWaitedFor(ref, reason));
        } else {
          left.put(ref, now);
          if (terminating(now)) {
            // Someone else deletes it, so the stepper sends no eviction; kubectl would send one
            // (accepted, the pod going anyway) and print its line, so it is announced.
            announce(ref);
            if (options.dryRun() != DryRun.NONE) {
              left.remove(ref);
              evicted.add(ref);
            }
          }
        }
      }
    }

    /** The pods still awaited, as last seen: the next step's. */
    List<V1Pod> sendable() {
      return List.copyOf(left.values());
    }

    boolean complete() {
      return left.isEmpty();
    }

    /** How the drain ended: the pods that went, and those still awaited with what holds them. */
    DrainResult result() {
      Map<PodRef, String> pending = new TreeMap<>();
      for (Map.Entry<PodRef, V1Pod> e : left.entrySet()) {
        PodRef ref = e.getKey();
        V1Pod pod = e.getValue();
        DrainMemory.PodState s = memory.state(ref);
        EvictionOutcome.Kind waiting = s == null ? null : s.waiting;
        if (terminating(pod) || waiting == EvictionOutcome.Kind.ACCEPTED) {
          pending.put(ref, "terminating");
        } else if (waiting == EvictionOutcome.Kind.BLOCKED) {
          pending.put(
              ref,
              DrainResult.BLOCKED
                  + (s.budgets.isEmpty()
                      ? "a PodDisruptionBudget"
                      : "PodDisruptionBudget " + String.join(", ", new TreeSet<>(s.budgets))));
        } else {
          pending.put(ref, DrainResult.NOT_EVICTED);
        }
      }
      return new DrainResult(
          evicted, pending, failed, timedOut && !pending.isEmpty(), interruption);
    }

    private void announce(PodRef ref) {
      if (announced.add(ref)) {
        boolean eviction = memory.usingEviction(options);
        tell(() -> listener.evicting(ref, eviction));
      }
    }

    /** In a dry run: would go, and is announced as kubectl prints it. */
    private void done(PodRef ref) {
      announce(ref);
      evicted.add(ref);
    }

    private void gone(PodRef ref) {
      left.remove(ref);
      evicted.add(ref);
      boolean eviction = memory.usingEviction(options);
      tell(() -> listener.gone(ref, eviction));
    }

    private void fail(PodRef ref, String reason) {
      if (left.remove(ref) != null) {
        failed.put(ref, reason);
        LOG.info("pod eviction failed pod={} reason={}", ref, reason);
        tell(() -> listener.failed(ref, reason));
      }
    }

    private static boolean terminating(V1Pod pod) {
      return pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null;
    }
  }

  /**
   * How a blocking drain ended; the plan (pods skipped, warnings) and each pod's progress were told
   * to the listener. Complete means every pod to evict is gone (or, in a dry run, would go).
   *
   * @param evicted pods evicted or deleted and gone (or replaced by a namesake); in a dry run, the
   *     pods that would be evicted (in a server dry run, those whose eviction the server accepted)
   * @param pending pods still there when the drain ended, with what holds them ("terminating",
   *     "blocked by PodDisruptionBudget db", "not evicted yet")
   * @param failed pods whose eviction failed for good, with the reason
   * @param interruption why the drain stopped early without timing out, if it did
   */
  public record DrainResult(
      List<PodRef> evicted,
      Map<PodRef, String> pending,
      Map<PodRef, String> failed,
      boolean timedOut,
      Optional<String> interruption) {
    /** What {@link #pending} says of a pod nothing is known to hold. */
    public static final String NOT_EVICTED = "not evicted yet";

    /** How {@link #pending} starts for a pod a PodDisruptionBudget last refused to evict. */
    public static final String BLOCKED = "blocked by ";

    public DrainResult {
      evicted = evicted.stream().sorted().toList();
      pending = new TreeMap<>(pending);
      failed = new TreeMap<>(failed);
    }

    public boolean isComplete() {
      return pending.isEmpty() && failed.isEmpty() && interruption.isEmpty();
    }

    /** One line for logs: "not drained: timed out; 2 evicted, 1 pending (ns/a terminating)". */
    @Override
    public String toString() {
      StringBuilder s = new StringBuilder(isComplete() ? "drained: " : "not drained: ");
      if (timedOut) {
        s.append("timed out; ");
      }
      interruption.ifPresent(i -> s.append(i).append("; "));
      return s.append(evicted.size())
          .append(" evicted")
          .append(pods(pending, " pending (", " ", ", "))
          .append(pods(failed, " failed (", ": ", "; "))
          .toString();
    }

    /** ", 2 pending (ns/a terminating, ns/b ...)", or nothing for no pods. */
    private static String pods(Map<PodRef, String> pods, String what, String is, String between) {
      return pods.isEmpty()
          ? ""
          : pods.entrySet().stream()
              .map(e -> e.getKey() + is + e.getValue())
              .collect(Collectors.joining(between, ", " + pods.size() + what, ")"));
    }
  }

  /**
   * Per-pod progress of one drain, for kubectl's lines. Calls for one drain come from the thread
   * that called {@link NodeDrainer#drain}, one at a time. In a dry run, {@link #evicting} is called
   * for each pod that would go; {@link #gone} is not, since nothing goes.
   */
  public interface DrainProgressListener {
    DrainProgressListener NONE = new DrainProgressListener() {};

    /** The plan: pods to evict, pods left in place, and kubectl's warnings. */
    default void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {}

    /**
     * The first eviction (or deletion) of a pod is about to be sent; or the pod is already being
     * deleted (kubectl would send it one, accepted since the pod goes anyway).
     */
    default void evicting(PodRef pod, boolean usingEviction) {}

    /** A PodDisruptionBudget refused the eviction (HTTP 429); retried until the timeout. */
    default void blocked(PodRef pod, Set<String> budgets, String message) {}

    /** A request failed in a way worth retrying (terminating namespace, server error). */
    default void retrying(PodRef pod, String reason) {}

    /** The pod was evicted (or deleted) and is gone, or was replaced by a namesake. */
    default void gone(PodRef pod, boolean usingEviction) {}

    /** The pod is being deleted since longer than the skip-wait timeout: no longer waited for. */
    default void notWaitedFor(PodRef pod, String reason) {}

    /** The pod cannot be evicted; the drain goes on with the others and is incomplete. */
    default void failed(PodRef pod, String reason) {}
  }
}
