package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drains a node the way {@code kubectl drain} does: cordon, list the node's pods, give each a
 * verdict (refusing the whole drain if any pod may not go), evict the others (or delete them), and
 * wait until they are gone. Faster than kubectl: evictions run concurrently (bounded), and one
 * watch on the node's pods replaces kubectl's per-pod polling.
 *
 * <p>Thread-safe: one instance can drain several nodes at once. It knows nothing about VMIs.
 */
public final class NodeDrainer {
  private static final Logger LOG = LoggerFactory.getLogger(NodeDrainer.class);

  /** How often the wait re-checks skip-wait ages when nothing else happens. */
  private static final long TICK_NANOS = TimeUnit.SECONDS.toNanos(1);

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
   * Marks the node unschedulable (patches spec.unschedulable only).
   *
   * @return true if it was schedulable before
   * @throws NodeNotFoundException if there is no such node
   */
  public boolean cordon(String nodeName) throws ApiException {
    boolean changed = cordoner.setUnschedulable(requireNode(nodeName), true, DryRun.NONE);
    LOG.info("node cordon node={} changed={}", nodeName, changed);
    return changed;
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
   * API server lists them. The selector is checked by the server.
   */
  public List<String> nodesMatching(String labelSelector) throws ApiException {
    return new NodeLister(api).names(Objects.requireNonNull(labelSelector, "labelSelector"));
  }

  /**
   * Checks that every named node exists, before a command changes any of them (kubectl resolves all
   * its arguments first).
   *
   * @throws NodeNotFoundException for the first name that is not a node
   */
  public void requireNodes(List<String> nodeNames) throws ApiException {
    NodeLister lister = new NodeLister(api);
    for (String name : nodeNames) {
      lister.require(requireNode(name));
    }
  }

  /**
   * Marks the node schedulable again.
   *
   * @return true if it was unschedulable before
   * @throws NodeNotFoundException if there is no such node
   */
  public boolean uncordon(String nodeName) throws ApiException {
    boolean changed = cordoner.setUnschedulable(requireNode(nodeName), false, DryRun.NONE);
    LOG.info("node uncordon node={} changed={}", nodeName, changed);
    return changed;
  }

  /**
   * Cordons the node and evicts its pods, blocking until they are gone or the options' timeout
   * passes. A timeout, a pod that cannot be evicted, or a lost API server is reported in the
   * result; only a refusal (nothing evicted) and failures before any eviction (unknown node, cannot
   * list pods) throw.
   *
   * @throws NodeNotFoundException if there is no such node
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted
   * @throws ApiException if cordoning, listing the pods or discovering eviction support failed
   */
  public DrainResult drain(String nodeName, DrainOptions options)
      throws ApiException, DrainRefusedException {
    requireNode(nodeName);
    Objects.requireNonNull(options, "options");
    long started = System.nanoTime();
    // As kubectl's --timeout: zero means no timeout.
    Deadline deadline =
        options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    // Every request of this drain ends by its deadline, however slowly the server answers.
    RawApi api = this.api.until(deadline);
    SafeListener listener = new SafeListener(options.progressListener());
    try {
      LOG.info("drain started node={} options={}", nodeName, options);
      // Cordon first, as kubectl does, so nothing new lands on the node while it is emptied.
      boolean cordoned = new Cordoner(api).setUnschedulable(nodeName, true, options.dryRun());
      listener.cordoned(nodeName, cordoned);

      PodLister lister = new PodLister(api);
      PodLister.Listing listing;
      try {
        listing = lister.list(nodeName, options.podSelector(), options.chunkSize());
      } catch (ApiException e) {
        throw afterCordon(nodeName, cordoned, "listing its pods", e);
      }
      PodFilters filters = new PodFilters(options, new ApiDaemonSetLookup(api), clock);
      DrainPlan plan = new DrainPlanner(filters.inOrder()).plan(listing.pods());
      if (plan.refused()) {
        DrainRefusedException refused =
            new DrainRefusedException(nodeName, plan.refusals(), cordoned);
        LOG.info("drain refused node={} reason={}", nodeName, refused.getMessage());
        throw refused;
      }
      listener.planned(plan.toEvictRefs(), plan.skipped(), plan.warningLines());

      DrainResult.Builder result =
          DrainResult.builder(nodeName)
              .dryRun(options.dryRun())
              .cordonedByThisDrain(cordoned)
              .warnings(plan.warningLines());
      DrainResult done;
      if (plan.toEvict().isEmpty() || options.dryRun() == DryRun.CLIENT) {
        boolean eviction = !options.disableEviction();
        plan.toEvictRefs().forEach(p -> listener.evicting(p, eviction));
        done =
            result
                .usedEviction(eviction)
                .evicted(plan.toEvictRefs())
                .skipped(plan.skipped())
                .elapsed(Duration.ofNanos(System.nanoTime() - started))
                .build();
      } else {
        Optional<String> evictionVersion;
        try {
          // Discovered once per drain, not per pod.
          evictionVersion =
              options.disableEviction() ? Optional.empty() : new EvictionSupport(api).discover();
        } catch (ApiException e) {
          throw afterCordon(nodeName, cordoned, "discovering eviction support", e);
        }
        done =
            evictAll(
                api,
                nodeName,
                options,
                plan,
                listing,
                lister,
                deadline,
                listener,
                result,
                started,
                evictionVersion);
      }
      LOG.info(
          "drain finished node={} complete={} summary={}",
          nodeName,
          done.isComplete(),
          done.summary());
      return done;
    } finally {
      listener.close();
    }
  }

  private DrainResult evictAll(
      RawApi api,
      String node,
      DrainOptions options,
      DrainPlan plan,
      PodLister.Listing listing,
      PodLister lister,
      Deadline deadline,
      SafeListener listener,
      DrainResult.Builder result,
      long started,
      Optional<String> evictionVersion) {
    Evictor evictor = new Evictor(api, options, evictionVersion.orElse(null));
    boolean serverDryRun = options.dryRun() == DryRun.SERVER;
    DrainTracker tracker =
        new DrainTracker(node, plan.toEvict(), serverDryRun, evictor.usingEviction(), listener);

    // The watch starts from the list's version, before any eviction: no deletion can slip past it.
    DeletionWaiter waiter =
        serverDryRun
            ? null
            : new DeletionWaiter(api, lister, node, listing.resourceVersion(), tracker).start();
    int threads = Math.min(options.maxConcurrentEvictions(), plan.toEvict().size());
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            new ThreadFactoryBuilder()
                .setNameFormat("drain-" + node.replace("%", "%%") + "-evict-%d")
                .setDaemon(true)
                .build());
    BudgetResolver budgets = new BudgetResolver(api);
    PodReader reader = new PodReader(api);
    boolean timedOut = false;
    String interruption = null;
    try {
      for (V1Pod pod : plan.toEvict()) {
        pool.execute(
            new PodEvictionTask(
                pod,
                evictor,
                tracker,
                budgets,
                reader,
                deadline,
                options.evictionRetryInterval(),
                listener));
      }
      pool.shutdown();
      while (true) {
        tracker.markStuckDeletions(clock, options.skipWaitForDeleteTimeout());
        DrainTracker.Step step = tracker.awaitStep(deadline, TICK_NANOS);
        if (step == DrainTracker.Step.CONTINUE) {
          continue;
        }
        timedOut = step == DrainTracker.Step.TIMED_OUT;
        if (step == DrainTracker.Step.WATCH_FAILED) {
          interruption = tracker.watchFailure();
        }
        break;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      interruption = "interrupted";
    } finally {
      pool.shutdownNow();
      if (waiter != null) {
        waiter.close();
      }
    }
    DrainTracker.Snapshot s = tracker.snapshot(options.skipWaitForDeleteTimeout());
    List<SkippedPod> skipped = new ArrayList<>(plan.skipped());
    skipped.addAll(s.notWaited());
    List<PodRef> evicted = serverDryRun ? s.accepted() : s.gone();
    if (serverDryRun) {
      // Nothing goes in a dry run; a "gone" pod (404) was gone before we came.
      evicted = new ArrayList<>(evicted);
      evicted.addAll(s.gone());
    }
    return result
        .usedEviction(evictor.usingEviction())
        .evicted(evicted)
        .skipped(skipped)
        .pending(s.pending())
        .pendingTerminating(s.pendingTerminating())
        .failed(s.failed())
        .denied(s.denied())
        .blockingBudgets(s.blockingBudgets())
        .timedOut(timedOut && !s.pending().isEmpty())
        .interruption(interruption)
        .elapsed(Duration.ofNanos(System.nanoTime() - started))
        .build();
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
}
