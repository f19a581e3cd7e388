package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainStepper.EvictionOutcome;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.NodePodWatch;
import dev.capk.vmieviction.drain.SteppedDrains.PodLister;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1NodeList;
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
 * Drains a node the way {@code kubectl drain} does, for the CLI: cordon, list the node's pods, give
 * each a verdict (refusing the whole drain if any pod may not go), then step the controller's
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
   * Cordons (or, with {@code desired} false, uncordons) the node as kubectl does under {@code
   * --dry-run}: a client dry run sends nothing, a server dry run sends the patch with {@code
   * dryRun=All}.
   *
   * @return true if the node changed (or, in a dry run, would change)
   * @throws NodeNotFoundException if there is no such node
   */
  public boolean setUnschedulable(String nodeName, boolean desired, DryRun dryRun)
      throws ApiException {
    boolean changed =
        new Cordoner(api)
            .setUnschedulable(
                requireNode(nodeName), desired, Objects.requireNonNull(dryRun, "dryRun"));
    LOG.info(
        "node {} node={} changed={} dryRun={}",
        desired ? "cordon" : "uncordon",
        nodeName,
        changed,
        dryRun);
    return changed;
  }

  /**
   * The names of the nodes matching a label selector (kubectl's {@code -l}), sorted by name as the
   * API server lists them, page by page. The selector is checked by the server.
   */
  public List<String> nodesMatching(String labelSelector) throws ApiException {
    CoreV1Api core = new CoreV1Api(api.client());
    List<String> names = new ArrayList<>();
    String token = null;
    do {
      CoreV1Api.APIlistNodeRequest req = core.listNode().limit(DrainOptions.DEFAULT_CHUNK_SIZE);
      if (!labelSelector.isBlank()) {
        req = req.labelSelector(labelSelector);
      }
      V1NodeList page = api.get(req._continue(token).buildCall(null), V1NodeList.class);
      page.getItems().forEach(n -> names.add(n.getMetadata().getName()));
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
    return names;
  }

  /**
   * Checks that every named node exists, before a command changes any of them (kubectl resolves all
   * its arguments first).
   *
   * @throws NodeNotFoundException for the first name that is not a node
   */
  public void requireNodes(List<String> nodeNames) throws ApiException {
    Cordoner cordoner = new Cordoner(api);
    for (String name : nodeNames) {
      cordoner.read(requireNode(name)).orElseThrow(() -> new NodeNotFoundException(name));
    }
  }

  /** As {@link #drain(String, DrainOptions, DrainProgressListener)}, telling no one. */
  public DrainResult drain(String nodeName, DrainOptions options)
      throws ApiException, DrainRefusedException {
    return drain(nodeName, options, DrainProgressListener.NONE);
  }

  /**
   * Cordons the node and evicts its pods, blocking until they are gone or the options' timeout
   * passes, telling {@code listener} of each pod's progress. A timeout, a pod that cannot be
   * evicted, or a lost API server is reported in the result; only a refusal (nothing evicted) and
   * failures before any eviction (unknown node, cannot list pods) throw.
   *
   * @throws NodeNotFoundException if there is no such node
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted
   * @throws ApiException if cordoning, listing the pods or discovering eviction support failed
   */
  public DrainResult drain(String nodeName, DrainOptions options, DrainProgressListener listener)
      throws ApiException, DrainRefusedException {
    requireNode(nodeName);
    Objects.requireNonNull(listener, "listener");
    long started = System.nanoTime();
    // As kubectl's --timeout: zero means no timeout.
    Deadline deadline =
        options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    // Every request of this drain ends by its deadline, however slowly the server answers.
    RawApi api = this.api.until(deadline);
    LOG.info("drain started node={} options={}", nodeName, options);
    // Cordon first, as kubectl does, so nothing new lands on the node while it is emptied.
    boolean cordoned = new Cordoner(api).setUnschedulable(nodeName, true, options.dryRun());
    PodLister.Listing listing;
    try {
      listing = new PodLister(api).list(nodeName, options.podSelector(), options.chunkSize());
    } catch (ApiException e) {
      throw afterCordon(nodeName, cordoned, "listing its pods", e);
    }
    // kubectl retries a refused eviction at one fixed interval: no backoff beyond it.
    DrainMemory memory =
        new DrainMemory(options.evictionRetryInterval(), options.evictionRetryInterval());
    // The plan's DaemonSet answers are kept in the memory, for the steps that plan again.
    PodFilters filters =
        new PodFilters(options, memory.daemonSets(() -> PodFilters.daemonSets(api)), clock);
    DrainPlan plan = DrainPlan.of(filters.inOrder(), listing.pods());
    if (plan.refused()) {
      DrainRefusedException refused =
          new DrainRefusedException(nodeName, plan.refusals(), cordoned);
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
      try {
        drain.run(deadline, seed);
      } catch (ApiException e) {
        throw afterCordon(nodeName, cordoned, "discovering eviction support", e);
      }
    }
    DrainResult done = drain.result(cordoned);
    LOG.info(
        "drain finished node={} complete={} summary={} ms={}",
        nodeName,
        done.isComplete(),
        done.summary(),
        Duration.ofNanos(System.nanoTime() - started).toMillis());
    return done;
  }

  /** A failure after the node was cordoned: says so, since the node stays cordoned. */
  private static ApiException afterCordon(
      String node, boolean cordoned, String step, ApiException e) {
    String state =
        cordoned
            ? "node " + node + " was cordoned by this drain and stays cordoned"
            : "node " + node + " was already cordoned";
    String message =
        "drain of node " + node + " failed " + step + " (" + state + "): " + ApiStatus.describe(e);
    LOG.warn(message);
    return new ApiException(message, e, e.getCode(), e.getResponseHeaders(), e.getResponseBody());
  }

  private static String requireNode(String nodeName) {
    if (nodeName == null || nodeName.isBlank()) {
      throw new IllegalArgumentException("node name must not be empty");
    }
    return nodeName;
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
    private final DrainPlan plan;
    private final DrainMemory memory;
    private final DrainOptions options;
    private final DrainProgressListener listener;
    private final Clock clock;
    private final Semaphore wake = new Semaphore(0);

    /** The pods still awaited, as last seen, by UID. */
    private final Map<String, V1Pod> left = new LinkedHashMap<>();

    private final Set<PodRef> announced = new HashSet<>();
    private final List<PodRef> evicted = new ArrayList<>();
    private final List<SkippedPod> notWaited = new ArrayList<>();
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
      this.plan = plan;
      plan.toEvict().forEach(p -> left.put(key(PodRef.of(p)), p));
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
      left.values().forEach(p -> done(PodRef.of(p)));
      left.clear();
    }

    /** One step over the pods still awaited; when the next eviction is due. */
    private Optional<Instant> step(DrainStepper stepper, Deadline deadline) throws ApiException {
      // Each step's requests end by the drain's deadline, not a full timeout after the step began.
      Duration bound = deadline.none() ? Duration.ZERO : deadline.remaining();
      if (!deadline.none() && bound.compareTo(Duration.ofMillis(1)) < 0) {
        bound = Duration.ofMillis(1);
      }
      try {
        return stepper
            .step(
                node,
                sendable(),
                options.toBuilder().timeout(bound).build(),
                memory,
                BudgetWatch.NONE,
                this)
            .nextTry();
      } catch (DrainRefusedException e) {
        // Pods that changed since the plan may no longer go: failed, since some peers already went.
        e.refusals().forEach((reason, refs) -> refs.forEach(ref -> fail(ref, reason)));
        return Optional.empty();
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
      announce(ref);
    }

    @Override
    public void answered(PodRef ref, EvictionOutcome o) {
      if (!left.containsKey(key(ref))) {
        return;
      }
      // The stepper has remembered the answer: its budgets and failures are in the memory.
      DrainMemory.PodState s = memory.state(ref);
      switch (o.kind()) {
        case ACCEPTED -> {
          if (options.dryRun() != DryRun.NONE) {
            left.remove(key(ref));
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
          if (s.waiting == DrainMemory.Waiting.FAILED) {
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
      Map<String, V1Pod> byKey = new HashMap<>();
      onNode.forEach(v -> byKey.put(key(PodRef.of(v)), v));
      for (V1Pod before : List.copyOf(left.values())) {
        PodRef ref = PodRef.of(before);
        V1Pod now = byKey.get(key(ref));
        if (now == null) {
          gone(ref);
        } else if (PodFilters.deletedLongerAgoThan(
            now, options.skipWaitForDeleteTimeout(), clock)) {
          String reason =
              "deletion timestamp older than "
                  + options.skipWaitForDeleteTimeout().toSeconds()
                  + " seconds, not waited for";
          left.remove(key(ref));
          notWaited.add(new SkippedPod(ref, reason));
          tell(() -> listener.notWaitedFor(ref, reason));
        } else {
          left.put(key(ref), now);
          if (terminating(now)) {
            // Someone else deletes it, so the stepper sends no eviction; kubectl would send one
            // (accepted, the pod going anyway) and print its line, so it is announced.
            announce(ref);
            if (options.dryRun() != DryRun.NONE) {
              left.remove(key(ref));
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

    /** How the drain ended: the plan's verdicts, the pods that went, and those still awaited. */
    DrainResult result(boolean cordoned) {
      List<SkippedPod> skipped = new ArrayList<>(plan.skipped());
      skipped.addAll(notWaited);
      Map<PodRef, String> pending = new TreeMap<>();
      Map<PodRef, Set<String>> blocking = new TreeMap<>();
      for (V1Pod pod : left.values()) {
        PodRef ref = PodRef.of(pod);
        DrainMemory.PodState s = memory.state(ref);
        DrainMemory.Waiting waiting = s == null ? null : s.waiting;
        if (terminating(pod) || waiting == DrainMemory.Waiting.ACCEPTED) {
          pending.put(ref, "terminating");
        } else if (waiting == DrainMemory.Waiting.BLOCKED) {
          blocking.put(ref, s.budgets);
          pending.put(
              ref,
              s.budgets.isEmpty()
                  ? "blocked by a PodDisruptionBudget"
                  : "blocked by PodDisruptionBudget "
                      + String.join(", ", new TreeSet<>(s.budgets)));
        } else {
          pending.put(ref, DrainResult.NOT_EVICTED);
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
          blocking,
          failed,
          plan.warningLines(),
          timedOut && !pending.isEmpty(),
          interruption);
    }

    private void announce(PodRef ref) {
      if (announced.add(ref)) {
        boolean eviction = usingEviction();
        tell(() -> listener.evicting(ref, eviction));
      }
    }

    /** In a dry run: would go, and is announced as kubectl prints it. */
    private void done(PodRef ref) {
      announce(ref);
      evicted.add(ref);
    }

    private void gone(PodRef ref) {
      left.remove(key(ref));
      evicted.add(ref);
      boolean eviction = usingEviction();
      tell(() -> listener.gone(ref, eviction));
    }

    private void fail(PodRef ref, String reason) {
      if (left.remove(key(ref)) != null) {
        failed.put(ref, reason);
        LOG.info("pod eviction failed pod={} reason={}", ref, reason);
        tell(() -> listener.failed(ref, reason));
      }
    }

    private static boolean terminating(V1Pod pod) {
      return pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null;
    }

    private static String key(PodRef ref) {
      return ref.uid() != null ? ref.uid() : ref.namespace() + "/" + ref.name();
    }
  }

  /**
   * How a blocking drain ended. Complete means every pod to evict is gone (or, in a dry run, would
   * go).
   *
   * @param cordonedByThisDrain true if this drain made the node unschedulable (false: it already
   *     was)
   * @param usedEviction true if pods were evicted, false if deleted (eviction disabled or not
   *     served)
   * @param evicted pods evicted or deleted and gone (or replaced by a namesake); in a dry run, the
   *     pods that would be evicted (in a server dry run, those whose eviction the server accepted)
   * @param skipped pods left in place, with the reason: DaemonSet, mirror, filtered, not waited for
   * @param pending pods still there when the drain ended, with what holds them ("terminating",
   *     "blocked by PodDisruptionBudget db", "not evicted yet")
   * @param blockingBudgets for each pending pod a PodDisruptionBudget last refused to evict: the
   *     budget names (empty if unknown)
   * @param failed pods whose eviction failed for good, with the reason
   * @param warnings kubectl's warnings of the plan ("deleting Pods that declare no controller:
   *     ns/a")
   * @param interruption why the drain stopped early without timing out, if it did
   */
  public record DrainResult(
      String node,
      DryRun dryRun,
      boolean cordonedByThisDrain,
      boolean usedEviction,
      List<PodRef> evicted,
      List<SkippedPod> skipped,
      Map<PodRef, String> pending,
      Map<PodRef, Set<String>> blockingBudgets,
      Map<PodRef, String> failed,
      List<String> warnings,
      boolean timedOut,
      Optional<String> interruption) {
    /** What {@link #pending} says of a pod nothing is known to hold. */
    public static final String NOT_EVICTED = "not evicted yet";

    public DrainResult {
      evicted = evicted.stream().sorted().toList();
      skipped = List.copyOf(skipped);
      pending = new TreeMap<>(pending);
      blockingBudgets = new TreeMap<>(blockingBudgets);
      failed = new TreeMap<>(failed);
      warnings = List.copyOf(warnings);
    }

    public boolean isComplete() {
      return pending.isEmpty() && failed.isEmpty() && interruption.isEmpty();
    }

    /** One line for logs and events. */
    public String summary() {
      StringBuilder s = new StringBuilder("node/").append(node);
      s.append(isComplete() ? " drained" : " not drained").append(dryRun.suffix()).append(": ");
      if (timedOut) {
        s.append("timed out; ");
      }
      interruption.ifPresent(i -> s.append(i).append("; "));
      s.append(evicted.size())
          .append(usedEviction || dryRun != DryRun.NONE ? " evicted" : " deleted");
      s.append(pods(pending, " pending (", " ", ", "))
          .append(pods(failed, " failed (", ": ", "; "));
      return s.append(", ").append(skipped.size()).append(" skipped").toString();
    }

    /** ", 2 pending (ns/a terminating, ns/b ...)", or nothing for no pods. */
    private static String pods(Map<PodRef, String> pods, String what, String is, String between) {
      return pods.isEmpty()
          ? ""
          : pods.entrySet().stream()
              .map(e -> e.getKey() + is + e.getValue())
              .collect(Collectors.joining(between, ", " + pods.size() + what, ")"));
    }

    @Override
    public String toString() {
      return summary();
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

  /** The node to cordon or drain does not exist: an {@link ApiException} with code 404. */
  public static class NodeNotFoundException extends ApiException {
    private static final long serialVersionUID = 1L;

    private final String node;

    public NodeNotFoundException(String node) {
      super(404, "node \"" + node + "\" not found");
      this.node = node;
    }

    public String node() {
      return node;
    }

    @Override
    public String getMessage() {
      return "node \"" + node + "\" not found";
    }
  }
}
