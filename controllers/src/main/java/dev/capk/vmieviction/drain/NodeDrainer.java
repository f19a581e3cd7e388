package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.EvictionOutcome;
import dev.capk.vmieviction.drain.SteppedDrains.NodePodWatch;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.time.GoDuration;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
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
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drains a cordoned node as {@code kubectl drain} does, for the CLI: plan the node's pods (refusing
 * the whole drain if any may not go), then step the controllers' engine ({@link SteppedDrains})
 * until they are gone, waiting between steps on one watch of the node's pods or for the next
 * eviction to be due. Thread-safe: one instance can drain several nodes at once.
 */
public final class NodeDrainer {
  private static final Logger LOG = LoggerFactory.getLogger(NodeDrainer.class);

  private final RawApi api;
  private final Clock clock = Clock.systemUTC();

  public NodeDrainer(ApiClient client) {
    this.api = new RawApi(Objects.requireNonNull(client, "client"));
  }

  /**
   * Evicts the pods of a node the caller has cordoned, blocking until they are gone or the options'
   * timeout passes, writing kubectl's lines to {@code output}. A timeout, a pod that cannot be
   * evicted, or a lost API server is reported in the result; only a refusal and failures before any
   * eviction throw.
   */
  public Drained drain(String nodeName, DrainOptions options, DrainOutput output)
      throws ApiException, DrainRefusedException {
    if (nodeName == null || nodeName.isBlank()) {
      // A blank name would select the unscheduled pods of the whole cluster.
      throw new IllegalArgumentException("node name must not be empty");
    }
    Objects.requireNonNull(output, "output");
    long started = System.nanoTime();
    // As kubectl's --timeout: zero means no timeout.
    Deadline deadline =
        options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    RawApi api = this.api.until(deadline);
    LOG.info("drain started node={} options={}", nodeName, options);
    V1PodList listed =
        SteppedDrains.listPods(api, nodeName, options.podSelector(), options.chunkSize());
    // kubectl retries a refused eviction at one fixed interval: no backoff beyond it.
    DrainMemory memory =
        new DrainMemory(options.evictionRetryInterval(), options.evictionRetryInterval());
    PodFilters filters =
        new PodFilters(options, memory.daemonSets(() -> PodFilters.daemonSets(api)), clock);
    DrainPlan plan = DrainPlan.of(filters.inOrder(), listed.getItems());
    if (plan.refused()) {
      DrainRefusedException refused = new DrainRefusedException(nodeName, plan.refusals());
      LOG.info("drain refused node={} reason={}", nodeName, refused.getMessage());
      throw refused;
    }
    BlockingDrain drain = new BlockingDrain(api, nodeName, plan, memory, options, output, clock);
    if (options.dryRun() == DryRun.CLIENT) {
      drain.wouldAllGo();
    } else if (!drain.complete()) {
      drain.run(deadline, listed);
    }
    Drained done = drain.finish();
    LOG.info(
        "drain finished node={} evicted={} error={} ms={}",
        nodeName,
        done.evicted().size(),
        done.error().orElse("none"),
        Duration.ofNanos(System.nanoTime() - started).toMillis());
    return done;
  }

  /**
   * One blocking drain of planned pods, never waiting past the deadline. The stepper's memory keeps
   * each pod's retries, budgets and failures; this, what kubectl's output needs.
   */
  static final class BlockingDrain implements SteppedDrains.Observer {
    /** The longest wait between looks: skip-wait ages grow without any event. */
    private static final Duration TICK = Duration.ofSeconds(1);

    private final RawApi api;
    private final String node;
    private final DrainMemory memory;
    private final DrainOptions options;
    private final DrainOutput output;
    private final Clock clock;
    private final Semaphore wake = new Semaphore(0);

    /** The pods still awaited, as last seen. */
    private final Map<PodRef, V1Pod> left = new LinkedHashMap<>();

    private final Set<PodRef> announced = new HashSet<>();
    private final List<PodRef> evicted = new ArrayList<>();
    private final Map<PodRef, String> failed = new TreeMap<>();

    boolean timedOut;

    private Optional<String> interruption = Optional.empty();

    BlockingDrain(
        RawApi api,
        String node,
        DrainPlan plan,
        DrainMemory memory,
        DrainOptions options,
        DrainOutput output,
        Clock clock) {
      this.api = api;
      this.node = node;
      plan.toEvict().forEach(p -> left.put(PodRef.of(p), p));
      this.memory = memory;
      this.options = options;
      this.output = output;
      this.clock = clock;
      plan.warningLines().forEach(w -> err("Warning: " + w));
    }

    /** Until the pods are gone, the deadline passes, or the watch is lost. */
    void run(Deadline deadline, V1PodList seed) throws ApiException {
      Duration retry = options.evictionRetryInterval();
      try (SteppedDrains stepper = new SteppedDrains("drain-evict-%d", retry, retry);
          NodePodWatch watch = NodePodWatch.start(api, node, wake::release, seed)) {
        while (true) {
          watch.pods().ifPresent(this::seen);
          tell(() -> output.awaiting(node, left.size(), refusals().values()));
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
          wake.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
          wake.drainPermits();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        interruption = Optional.of("interrupted");
      }
    }

    void wouldAllGo() {
      left.keySet().forEach(this::done);
      left.clear();
    }

    /** When the next eviction is due. */
    private Optional<Instant> step(SteppedDrains stepper, Deadline deadline) throws ApiException {
      try {
        return stepper
            .step(api.client(), node, sendable(), options, memory, BudgetWatch.NONE, this, deadline)
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
      DrainMemory.PodState s = memory.state(ref);
      switch (o.kind()) {
        case ACCEPTED -> {
          if (options.dryRun() != DryRun.NONE) {
            left.remove(ref);
            done(ref);
          }
        }
        case GONE, REPLACED -> gone(ref);
        case BLOCKED ->
            err(
                evictionError(ref)
                    + " (will retry after "
                    + GoDuration.format(options.evictionRetryInterval())
                    + "): "
                    + o.message()
                    + (s.budgets.isEmpty() ? "" : " [" + budgets(s.budgets) + "]"));
        case NAMESPACE_TERMINATING ->
            err(
                evictionError(ref)
                    + " (will retry): namespace "
                    + ref.namespace()
                    + " is terminating: "
                    + o.message());
        case TRANSIENT -> {
          if (s.waiting == EvictionOutcome.Kind.FAILED) {
            fail(ref, s.failure);
          } else {
            err(evictionError(ref) + " (will retry): " + o.message());
          }
        }
        // The server asked to come back later (Retry-After): kubectl says nothing either.
        case THROTTLED -> {}
        case MULTIPLE_BUDGETS, FORBIDDEN, FAILED -> fail(ref, s.failure);
      }
    }

    /** The node's pods now, from the watch. */
    void seen(List<V1Pod> onNode) {
      Map<PodRef, V1Pod> byRef = new HashMap<>();
      onNode.forEach(v -> byRef.put(PodRef.of(v), v));
      for (PodRef ref : List.copyOf(left.keySet())) {
        V1Pod now = byRef.get(ref);
        if (now == null) {
          gone(ref);
        } else if (PodFilters.deletedLongerAgoThan(
            now, options.skipWaitForDeleteTimeout(), clock)) {
          left.remove(ref);
          out(
              "pod \""
                  + ref.name()
                  + "\" deletion timestamp older than "
                  + options.skipWaitForDeleteTimeout().toSeconds()
                  + " seconds, not waited for, skipping");
        } else {
          left.put(ref, now);
          if (PodFilters.terminating(now)) {
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

    List<V1Pod> sendable() {
      return List.copyOf(left.values());
    }

    boolean complete() {
      return left.isEmpty();
    }

    /** Writes how the drain ended as kubectl does. */
    Drained finish() {
      Map<PodRef, Set<String>> refused = refusals();
      Optional<String> error = Optional.empty();
      if (left.isEmpty() && failed.isEmpty() && interruption.isEmpty()) {
        out("node/" + node + " drained" + options.dryRun().suffix());
      } else {
        String timeout = "global timeout reached: " + GoDuration.format(options.timeout());
        // kubectl names the (first) pod whose eviction a budget kept refusing.
        error =
            Optional.of(
                timedOut && !left.isEmpty()
                    ? refused.keySet().stream()
                        .findFirst()
                        .map(p -> evictionError(p) + ": " + timeout)
                        .orElse(timeout)
                    : interruption.orElse(
                        failed.isEmpty() ? "incomplete" : "some pods could not be evicted"));
        if (!left.isEmpty()) {
          err(
              "There are pending pods in node \""
                  + node
                  + "\" when an error occurred: "
                  + error.get());
          new TreeMap<>(left).forEach((ref, pod) -> err(line(ref) + holding(ref, pod, refused)));
        }
        failed.forEach((ref, reason) -> err("failed: " + line(ref) + ": " + reason));
      }
      return new Drained(evicted, error);
    }

    private String holding(PodRef ref, V1Pod pod, Map<PodRef, Set<String>> refused) {
      DrainMemory.PodState s = memory.state(ref);
      if (PodFilters.terminating(pod)
          || (s != null && s.waiting == EvictionOutcome.Kind.ACCEPTED)) {
        return " (terminating)";
      }
      Set<String> by = refused.get(ref);
      return by == null
          ? ""
          : " (blocked by " + (by.isEmpty() ? "a PodDisruptionBudget" : budgets(by)) + ")";
    }

    private Map<PodRef, Set<String>> refusals() {
      Map<PodRef, Set<String>> refused = new TreeMap<>();
      for (PodRef ref : left.keySet()) {
        DrainMemory.PodState s = memory.state(ref);
        if (s != null
            && s.waiting == EvictionOutcome.Kind.BLOCKED
            && !PodFilters.terminating(left.get(ref))) {
          refused.put(ref, Set.copyOf(s.budgets));
        }
      }
      return refused;
    }

    private static String budgets(Set<String> names) {
      return "PodDisruptionBudget " + String.join(", ", new TreeSet<>(names));
    }

    private static String line(PodRef p) {
      return "pod/" + p.name() + " -n " + p.namespace();
    }

    private static String evictionError(PodRef pod) {
      return "error when evicting pods/\"" + pod.name() + "\" -n \"" + pod.namespace() + "\"";
    }

    private void announce(PodRef ref) {
      // kubectl announces evictions (and, in a client dry run, whatever would go), not deletions.
      if (announced.add(ref)
          && (memory.usingEviction(options) || options.dryRun() == DryRun.CLIENT)) {
        out("evicting pod " + ref + options.dryRun().suffix());
      }
    }

    private void done(PodRef ref) {
      announce(ref);
      evicted.add(ref);
    }

    private void gone(PodRef ref) {
      left.remove(ref);
      evicted.add(ref);
      out("pod/" + ref.name() + (memory.usingEviction(options) ? " evicted" : " deleted"));
    }

    private void fail(PodRef ref, String reason) {
      if (left.remove(ref) != null) {
        failed.put(ref, reason);
        LOG.info("pod eviction failed pod={} reason={}", ref, reason);
        err(evictionError(ref) + ": " + reason);
      }
    }

    private void out(String line) {
      tell(() -> output.out(line));
    }

    private void err(String line) {
      tell(() -> output.err(line));
    }

    /** An output's failure is logged, not the drain's. */
    private static void tell(Runnable call) {
      try {
        call.run();
      } catch (RuntimeException e) {
        LOG.warn("drain output failed error={}", e.toString());
      }
    }
  }

  /**
   * How a blocking drain ended.
   *
   * @param evicted pods evicted or deleted and gone; in a dry run, those that would be
   * @param error kubectl's reason the node is not drained, if it is not
   */
  public record Drained(List<PodRef> evicted, Optional<String> error) {
    public Drained {
      evicted = evicted.stream().sorted().toList();
    }
  }

  /** Where a blocking drain writes kubectl's lines, from the draining thread. */
  public interface DrainOutput {
    DrainOutput NONE = new DrainOutput() {};

    default void out(String line) {}

    default void err(String line) {}

    /** For a status line: the node's pods still awaited; the budgets refusing each refused one. */
    default void awaiting(String node, int left, Collection<Set<String>> refusedBy) {}
  }
}
