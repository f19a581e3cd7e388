package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainStepper.EvictionOutcome;
import dev.capk.vmieviction.drain.NodeWatch.BudgetAllowance;
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
import java.util.Collections;
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
 * Drains a node the way {@code kubectl drain} does: cordon, list the node's pods, give each a
 * verdict (refusing the whole drain if any pod may not go), evict the others (or delete them), and
 * wait until they are gone. The evictions are sent by the controller's stepped engine ({@link
 * DrainStepper}); this class blocks between its steps. Faster than kubectl: evictions run
 * concurrently (bounded), and one watch on the node's pods replaces kubectl's per-pod polling.
 *
 * <p>Thread-safe: one instance can drain several nodes at once. It knows nothing about VMIs.
 */
public final class NodeDrainer {
  private static final Logger LOG = LoggerFactory.getLogger(NodeDrainer.class);

  private final RawApi api;
  private final Cordoner cordoner;
  private final Clock clock;

  public NodeDrainer(ApiClient client) {
    this(client, Clock.systemUTC());
  }

  NodeDrainer(ApiClient client, Clock clock) {
    this.api = new RawApi(Objects.requireNonNull(client, "client"));
    this.cordoner = new Cordoner(api);
    this.clock = clock;
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
        cordoner.setUnschedulable(
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
      if (token != null) {
        req = req._continue(token);
      }
      V1NodeList page = api.get(req.buildCall(null), V1NodeList.class);
      if (page.getItems() != null) {
        page.getItems().forEach(n -> names.add(n.getMetadata().getName()));
      }
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
    CoreV1Api core = new CoreV1Api(api.client());
    for (String name : nodeNames) {
      RawApi.Answer answer = api.execute(core.readNode(requireNode(name)).buildCall(null));
      if (answer.code() == 404) {
        throw new NodeNotFoundException(name);
      }
      if (!answer.ok()) {
        throw answer.toException();
      }
    }
  }

  /**
   * Cordons the node and evicts its pods, blocking until they are gone or the options' timeout
   * passes. A timeout, a pod that cannot be evicted, or a lost API server is reported in the
   * result; only a refusal (nothing evicted) and failures before any eviction (unknown node, cannot
   * list pods) throw. The evictions are the stepped engine's ({@link DrainStepper}), driven here
   * until the node is empty.
   *
   * @throws NodeNotFoundException if there is no such node
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted
   * @throws ApiException if cordoning, listing the pods or discovering eviction support failed
   */
  public DrainResult drain(String nodeName, DrainOptions options)
      throws ApiException, DrainRefusedException {
    return drain(nodeName, options, DrainProgressListener.NONE);
  }

  /** As {@link #drain(String, DrainOptions)}, telling {@code listener} of each pod's progress. */
  public DrainResult drain(String nodeName, DrainOptions options, DrainProgressListener listener)
      throws ApiException, DrainRefusedException {
    requireNode(nodeName);
    Objects.requireNonNull(options, "options");
    long started = System.nanoTime();
    // As kubectl's --timeout: zero means no timeout.
    Deadline deadline =
        options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    // Every request of this drain ends by its deadline, however slowly the server answers.
    RawApi api = this.api.until(deadline);
    Objects.requireNonNull(listener, "listener");
    LOG.info("drain started node={} options={}", nodeName, options);
    // Cordon first, as kubectl does, so nothing new lands on the node while it is emptied.
    boolean cordoned = new Cordoner(api).setUnschedulable(nodeName, true, options.dryRun());
    BlockingDrain.tell(() -> listener.cordoned(nodeName, cordoned));

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
    } else if (!plan.toEvict().isEmpty()) {
      try {
        drain.run(
            deadline,
            new V1PodList()
                .metadata(new V1ListMeta().resourceVersion(listing.resourceVersion()))
                .items(listing.pods()));
      } catch (ApiException e) {
        throw afterCordon(nodeName, cordoned, "discovering eviction support", e);
      }
    }
    DrainResult done = drain.result(cordoned, Duration.ofNanos(System.nanoTime() - started));
    LOG.info(
        "drain finished node={} complete={} summary={}",
        nodeName,
        done.isComplete(),
        done.summary());
    return done;
  }

  /** A failure after the node was cordoned: says so, since the node stays cordoned. */
  private static ApiException afterCordon(
      String node, boolean cordoned, String step, ApiException e) {
    String state =
        cordoned
            ? "node " + node + " was cordoned by this drain and stays cordoned"
            : "node " + node + " was already cordoned";
    LOG.warn(
        "drain failed node={} step={} state={} error={}", node, step, state, ApiStatus.describe(e));
    return new ApiException(
        "drain of node " + node + " failed " + step + " (" + state + "): " + ApiStatus.describe(e),
        e,
        e.getCode(),
        e.getResponseHeaders(),
        e.getResponseBody());
  }

  private static String requireNode(String nodeName) {
    if (nodeName == null || nodeName.isBlank()) {
      throw new IllegalArgumentException("node name must not be empty");
    }
    return nodeName;
  }

  /**
   * One blocking drain ({@link NodeDrainer#drain}) once the node is cordoned and its pods planned:
   * a thin loop that steps the drain ({@link DrainStepper}, the controller's engine) and, between
   * steps, waits for the node's pod watch to show pods leaving or for the next eviction to be due,
   * never past the deadline. The stepper's memory keeps each pod's retries, budgets and failures;
   * this loop keeps only what kubectl's output needs: the pods still awaited (by UID: a namesake a
   * StatefulSet recreates is another pod), and how the others ended. A listener that throws is
   * logged and ignored, since reporting must never break a drain.
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
    private final boolean dryRun;
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
      this.dryRun = options.dryRun() != DryRun.NONE;
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
      // Evictions of one step side by side, no more than the options allow.
      ExecutorService evictions =
          Executors.newFixedThreadPool(
              Math.max(1, Math.min(options.maxConcurrentEvictions(), left.size())),
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
          interruption = watch.failure();
          timedOut = deadline.passed();
          if (interruption.isPresent() || timedOut) {
            return;
          }
          Duration wait = deadline.cap(until(step(stepper, deadline)));
          if (!wait.isNegative() && !wait.isZero()) {
            wake.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
          }
          // Several wake-ups while stepping ask for one look, not one each.
          wake.drainPermits();
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
      left.values().forEach(p -> done(PodRef.of(p)));
      left.clear();
    }

    /** One step over the pods still awaited; when the next eviction is due. */
    private Optional<Instant> step(DrainStepper stepper, Deadline deadline) throws ApiException {
      // Each step's requests end by the drain's deadline, not a full timeout after the step began.
      Duration bound = deadline.none() ? Duration.ZERO : deadline.remaining();
      DrainOptions bounded =
          options.toBuilder()
              .timeout(bound.isZero() ? bound : max(bound, Duration.ofMillis(1)))
              .build();
      try {
        return stepper
            .step(node, sendable(), bounded, memory, BudgetAllowance.UNKNOWN, this)
            .nextTry();
      } catch (DrainRefusedException e) {
        // Pods that changed since the plan may no longer go: failed, since some peers already went.
        e.refusals().forEach((reason, refs) -> refs.forEach(ref -> fail(ref, reason)));
        return Optional.empty();
      }
    }

    /** How long to wait for {@code next}: a tick at most (none: only deletions are awaited). */
    private Duration until(Optional<Instant> next) {
      Duration wait = next.map(n -> Duration.between(clock.instant(), n)).orElse(TICK);
      return wait.compareTo(TICK) < 0 ? wait : TICK;
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
          if (dryRun) {
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
          left.remove(key(ref));
          notWaited.add(new SkippedPod(ref, notWaitedReason()));
          LOG.info("pod not waited for pod={}", ref);
          tell(() -> listener.notWaitedFor(ref, notWaitedReason()));
        } else {
          left.put(key(ref), now);
          if (terminating(now)) {
            // Someone else deletes it, so the stepper sends no eviction; kubectl would send one
            // (accepted, the pod going anyway) and print its line, so it is announced.
            announce(ref);
            if (dryRun) {
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
    DrainResult result(boolean cordoned, Duration elapsed) {
      List<SkippedPod> skipped = new ArrayList<>(plan.skipped());
      skipped.addAll(notWaited);
      List<PodRef> pending = new ArrayList<>();
      List<PodRef> terminating = new ArrayList<>();
      Map<PodRef, Set<String>> blocking = new TreeMap<>();
      for (V1Pod pod : left.values()) {
        PodRef ref = PodRef.of(pod);
        pending.add(ref);
        DrainMemory.PodState s = memory.state(ref);
        if (terminating(pod) || (s != null && s.waiting == DrainMemory.Waiting.ACCEPTED)) {
          terminating.add(ref);
        } else if (s != null && s.waiting == DrainMemory.Waiting.BLOCKED) {
          blocking.put(ref, s.budgets);
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
  }

  /**
   * How a blocking drain ({@link NodeDrainer#drain}) ended. Complete means every pod to evict is
   * gone (or, in a dry run, would go). An incomplete drain says which pods are still there, which
   * of those were blocked by which budgets, which failed and why, and whether the timeout or a lost
   * connection ended it.
   *
   * @param cordonedByThisDrain true if this drain made the node unschedulable (false: it already
   *     was)
   * @param usedEviction true if pods were evicted, false if deleted (eviction disabled or not
   *     served)
   * @param evicted pods evicted or deleted and gone (or replaced by a namesake); in a dry run, the
   *     pods that would be evicted (in a server dry run, those whose eviction the server accepted)
   * @param skipped pods left in place, with the reason: DaemonSet, mirror, filtered, deleted long
   *     ago, not waited for
   * @param pending pods still there when the drain ended (timeout, lost connection, failure)
   * @param pendingTerminating the pending pods that are being deleted
   * @param failed pods whose eviction failed for good, with the reason (e.g. several budgets select
   *     the pod, or the API server denied the request)
   * @param blockingBudgets for each pending pod a PodDisruptionBudget last refused to evict: the
   *     budget names (empty if unknown)
   * @param warnings kubectl-style warnings of the plan ("deleting Pods that declare no controller:
   *     ns/a")
   * @param interruption why the drain stopped early without timing out (lost the API server,
   *     interrupted), if it did
   */
  public record DrainResult(
      String node,
      DryRun dryRun,
      boolean cordonedByThisDrain,
      boolean usedEviction,
      List<PodRef> evicted,
      List<SkippedPod> skipped,
      List<PodRef> pending,
      List<PodRef> pendingTerminating,
      Map<PodRef, String> failed,
      Map<PodRef, Set<String>> blockingBudgets,
      List<String> warnings,
      boolean timedOut,
      Optional<String> interruption,
      Duration elapsed) {

    public DrainResult {
      evicted = sortedCopy(evicted);
      skipped = List.copyOf(skipped);
      pending = sortedCopy(pending);
      pendingTerminating = sortedCopy(pendingTerminating);
      failed = Collections.unmodifiableMap(new TreeMap<>(failed));
      Map<PodRef, Set<String>> blocking = new TreeMap<>();
      blockingBudgets.forEach((k, v) -> blocking.put(k, Set.copyOf(v)));
      blockingBudgets = Collections.unmodifiableMap(blocking);
      warnings = List.copyOf(warnings);
    }

    public boolean isComplete() {
      return pending.isEmpty() && failed.isEmpty() && interruption.isEmpty();
    }

    /** One line for logs and events. */
    public String summary() {
      StringBuilder s = new StringBuilder("node/").append(node);
      String suffix = dryRun.suffix();
      if (isComplete()) {
        s.append(" drained").append(suffix).append(": ");
      } else {
        s.append(" not drained").append(suffix).append(": ");
        if (timedOut) {
          s.append("timed out; ");
        }
        interruption.ifPresent(i -> s.append(i).append("; "));
      }
      s.append(evicted.size())
          .append(usedEviction || dryRun != DryRun.NONE ? " evicted" : " deleted");
      if (!pending.isEmpty()) {
        s.append(", ")
            .append(pending.size())
            .append(" pending (")
            .append(
                pending.stream()
                    .map(p -> p + " " + holding(p).orElse("not evicted yet"))
                    .collect(Collectors.joining(", ")))
            .append(")");
      }
      if (!failed.isEmpty()) {
        s.append(", ")
            .append(failed.size())
            .append(" failed (")
            .append(
                failed.entrySet().stream()
                    .map(e -> e.getKey() + ": " + e.getValue())
                    .collect(Collectors.joining("; ")))
            .append(")");
      }
      s.append(", ").append(skipped.size()).append(" skipped");
      s.append(", in ").append(elapsed.toMillis()).append(" ms");
      return s.toString();
    }

    /** What holds a pending pod on the node, if known: its budgets, or its deletion. */
    public Optional<String> holding(PodRef p) {
      Set<String> budgets = blockingBudgets.get(p);
      if (budgets != null) {
        return Optional.of(
            budgets.isEmpty()
                ? "blocked by a PodDisruptionBudget"
                : "blocked by PodDisruptionBudget " + String.join(", ", new TreeSet<>(budgets)));
      }
      return pendingTerminating.contains(p) ? Optional.of("terminating") : Optional.empty();
    }

    @Override
    public String toString() {
      return summary();
    }

    private static List<PodRef> sortedCopy(List<PodRef> l) {
      List<PodRef> c = new ArrayList<>(l);
      Collections.sort(c);
      return List.copyOf(c);
    }
  }

  /**
   * Per-pod progress of one drain, for logs, events and metrics. Every method has an empty default.
   *
   * <p>Calls for one drain come from the thread that called {@link NodeDrainer#drain}, one at a
   * time, and stop when it returns. A listener that throws is logged and otherwise ignored:
   * reporting must never break a drain.
   *
   * <p>In a dry run, {@link #evicting} is called for each pod that would go; {@link #gone} is not,
   * since nothing goes.
   */
  public interface DrainProgressListener {
    /** A listener that does nothing. */
    DrainProgressListener NONE = new DrainProgressListener() {};

    /** The node is unschedulable now; {@code changed} is false when it already was. */
    default void cordoned(String node, boolean changed) {}

    /**
     * The plan: pods to evict, pods left in place, and kubectl-style warnings ("ignoring
     * DaemonSet-managed Pods: ...").
     */
    default void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {}

    /**
     * The first eviction (or, with eviction disabled or unsupported, deletion) request for a pod is
     * about to be sent; or the pod is already being deleted (kubectl would send it one, accepted
     * since the pod goes anyway), and the drain waits for it.
     */
    default void evicting(PodRef pod, boolean usingEviction) {}

    /**
     * A PodDisruptionBudget refused the eviction (HTTP 429); the drain retries until its timeout.
     */
    default void blocked(PodRef pod, Set<String> budgets, String message) {}

    /**
     * A request for the pod failed in a way worth retrying (terminating namespace, server error);
     * it is retried.
     */
    default void retrying(PodRef pod, String reason) {}

    /**
     * The pod was evicted (or, with eviction disabled or not served, deleted) and is gone, or was
     * replaced by a new pod of the same name.
     */
    default void gone(PodRef pod, boolean usingEviction) {}

    /**
     * The pod is being deleted since longer than the skip-wait timeout: the drain stops waiting for
     * it.
     */
    default void notWaitedFor(PodRef pod, String reason) {}

    /**
     * The pod cannot be evicted (e.g. several budgets match it); the drain goes on with the others
     * and is incomplete.
     */
    default void failed(PodRef pod, String reason) {}
  }

  /**
   * The node to cordon or drain does not exist. An {@link ApiException} with code 404, so callers
   * can treat it as one.
   */
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
