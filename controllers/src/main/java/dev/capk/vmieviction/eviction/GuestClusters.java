package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainStepper;
import dev.capk.vmieviction.drain.NodeWatch;
import dev.capk.vmieviction.drain.NodeWatch.BudgetAllowance;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.SteppedDrains;
import dev.capk.vmieviction.events.EventSeriesBook;
import dev.capk.vmieviction.events.EventWriters;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClient;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest clusters of the evacuations: connects a VMI to its guest cluster (through the cached
 * guest clients, reaching only the Cluster the tenant mapping allows), and keeps what each
 * cluster's evacuations share and what each drain needs between its steps.
 *
 * <p>The guest node drains under way, one per VMI being evacuated (by {@code namespace/name}): the
 * watch on the guest node's pods, which wakes the VMI's next step when pods leave, and the drain's
 * memory between steps ({@link SteppedDrains}). Opened by the first drain step of a VMI, closed
 * when its evacuation ends; a drain of another node or through another client (a rotated
 * kubeconfig) replaces it.
 *
 * <p>While drains of a guest cluster are refused by PodDisruptionBudgets, one {@link BudgetWatch}
 * per guest cluster (client) follows that cluster's budgets; a budget that allows a disruption
 * again wakes the drains it refused, and their refused pods are due at once. Closed when the
 * cluster's last drain ends, not when its drains stop waiting for a budget: under a budget that
 * allows one disruption at a time a drain is refused, freed and refused again many times, and each
 * new watch would list every budget of the cluster again.
 *
 * <p>Each guest cluster (client) whose nodes evacuations read has one {@link NodeWatch}: the first
 * step that needs a node lists the cluster's nodes once, and the steps and uncordon checks after it
 * read from the watch, not a GET each. It ends when unused for {@link NodeWatch#IDLE}.
 */
public final class GuestClusters implements GuestConnector, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(GuestClusters.class);

  private final Consumer<String> wake;
  private final SteppedDrains drains;

  /** VMIs woken because pods left their guest node, until their next step asks. */
  private final Set<String> woken = ConcurrentHashMap.newKeySet();

  /** A drain refused by budgets: through which client, and by which budgets (namespace/name). */
  private record Blocked(ApiClient client, Set<String> budgets) {}

  /** Guarded by this. */
  private final Map<String, Blocked> blocked = new HashMap<>();

  /** Guarded by this: one budget watch per guest cluster client with blocked drains. */
  private final Map<ApiClient, BudgetWatch> budgetWatches = new IdentityHashMap<>();

  /**
   * Guarded by this: per guest cluster client, its node watch, or the list it is being started from
   * (a failed or outdated one is replaced by the next step that needs the nodes).
   */
  private final Map<ApiClient, CompletableFuture<NodeWatch>> nodeWatches = new IdentityHashMap<>();

  /** Lists the nodes of a guest cluster, as one request of the step that asks. */
  @FunctionalInterface
  interface NodeListing {
    V1NodeList list() throws GuestAccessException, ApiException;
  }

  /** Budgets that allowed a disruption since the VMI's last step, by VMI. Guarded by this. */
  private final Map<String, Set<String>> freed = new HashMap<>();

  private final GuestClients clients;
  private final TenantMapping tenants;
  private final EventSeriesBook nodeEventSeries = new EventSeriesBook();
  private final EventWriters nodeEventWriters;

  /**
   * @param tenants which Cluster a VMI may reach
   * @param nodeEventWriters write the guest nodes' Events off the steps' threads
   * @param wake enqueues a VMI (by {@code namespace/name}) for its next step
   * @param maxRetry the longest wait between two evictions of a refused pod
   */
  public GuestClusters(
      GuestClients clients,
      TenantMapping tenants,
      EventWriters nodeEventWriters,
      Consumer<String> wake,
      Duration maxRetry) {
    this.clients = clients;
    this.tenants = tenants;
    this.nodeEventWriters = nodeEventWriters;
    this.wake = wake;
    this.drains =
        new SteppedDrains(
            "guest-eviction-%d", DrainOptions.DEFAULT_EVICTION_RETRY_INTERVAL, maxRetry);
  }

  @Override
  public Guest connect(VirtualMachineInstance vmi, Optional<Duration> timeLeft)
      throws GuestAccessException {
    GuestClient client = clients.get(tenants.clusterOf(vmi));
    return new GuestNodeDrainer(
        timeLeft.map(client::until).orElse(client), nodeEventSeries, nodeEventWriters, this);
  }

  @Override
  public void evacuationEnded(String vmiKey) {
    end(vmiKey);
  }

  /**
   * The drain of {@code node} for the VMI {@code vmiKey} through {@code client}, opened (and its
   * watch started) if there is none yet, or if its watch gave up.
   */
  SteppedDrains.Drain forVmi(String vmiKey, ApiClient client, String node) {
    return forVmi(vmiKey, client, node, null);
  }

  /**
   * As {@link #forVmi(String, ApiClient, String)}; a watch started here resumes from {@code seed},
   * the step's own fresh list of the node's pods.
   */
  SteppedDrains.Drain forVmi(String vmiKey, ApiClient client, String node, V1PodList seed) {
    boolean opening = drains.get(vmiKey).isEmpty();
    SteppedDrains.Drain d = drains.open(vmiKey, client, node, (key, n) -> wakeUp(key), seed);
    if (opening) {
      log.debug("guest pod watch opened vmi={} node={}", vmiKey, node);
    }
    return d;
  }

  /** The VMI's drain of {@code node} through {@code client}, if open and watching. */
  Optional<SteppedDrains.Drain> usable(String vmiKey, ApiClient client, String node) {
    return drains.usable(vmiKey, client, node);
  }

  /** A stepper for drains through {@code client}, sharing this registry's eviction threads. */
  DrainStepper stepper(ApiClient client) {
    return drains.stepper(client);
  }

  private void wakeUp(String vmiKey) {
    log.debug("guest pods left, waking vmi={}", vmiKey);
    woken.add(vmiKey);
    wake.accept(vmiKey);
  }

  /**
   * After a step: the budgets ({@code namespace/name}) that refused the VMI's pods, through {@code
   * client}; none, or another client, ends what was known before. Opens the cluster's budget watch
   * if needed; a budget already seen allowing wakes the VMI at once.
   */
  synchronized void blockedBy(String vmiKey, ApiClient client, Set<String> budgets) {
    Blocked before =
        budgets.isEmpty()
            ? blocked.remove(vmiKey)
            : blocked.put(vmiKey, new Blocked(client, Set.copyOf(budgets)));
    if (before != null && before.client() != client) {
      closeUnusedWatch(before.client());
    }
    if (budgets.isEmpty()) {
      return;
    }
    BudgetWatch watch =
        budgetWatches.computeIfAbsent(
            client,
            c -> {
              log.debug("guest budget watch opened vmi={}", vmiKey);
              return BudgetWatch.start(c, vmiKey, budget -> budgetAllows(c, budget));
            });
    budgets.stream().filter(watch::allows).forEach(b -> budgetAllows(client, b));
  }

  /**
   * A budget of the cluster {@code client} reaches allows a disruption: wake the drains it held.
   */
  private synchronized void budgetAllows(ApiClient client, String budget) {
    blocked.forEach(
        (vmiKey, b) -> {
          if (b.client() == client && b.budgets().contains(budget)) {
            freed.computeIfAbsent(vmiKey, k -> new HashSet<>()).add(budget);
            log.debug("guest budget allows, waking vmi={} budget={}", vmiKey, budget);
            wakeUp(vmiKey);
          }
        });
  }

  /**
   * What the budget watch of the cluster {@code client} reaches knows of its budgets, so a step
   * sends no more evictions than a budget allows; nothing known while no drain of the cluster was
   * refused by a budget yet (no watch).
   */
  synchronized BudgetAllowance budgetsOf(ApiClient client) {
    BudgetWatch watch = budgetWatches.get(client);
    return watch == null ? BudgetAllowance.UNKNOWN : watch;
  }

  /** The budgets that allowed a disruption since the VMI's last step (once). */
  synchronized Set<String> takeFreedBudgets(String vmiKey) {
    Set<String> f = freed.remove(vmiKey);
    return f == null ? Set.of() : f;
  }

  private void closeUnusedWatch(ApiClient client) {
    boolean draining =
        drains.keys().stream()
            .anyMatch(k -> drains.get(k).map(d -> d.client() == client).orElse(false));
    if (!draining && blocked.values().stream().noneMatch(b -> b.client() == client)) {
      BudgetWatch w = budgetWatches.remove(client);
      if (w != null) {
        w.close();
        log.debug("guest budget watch closed");
      }
    }
  }

  /**
   * The node watch of the guest cluster {@code client} reaches, while it is current: started from
   * {@code listing}'s list if there is none (that list is the caller's one request; steps that ask
   * meanwhile wait for it, at most {@code maxWait}). Empty while the watch does not reach the
   * server, or when its list failed or took longer than {@code maxWait}: the caller reads the node
   * itself, and that read names the trouble.
   *
   * @param name names the watch's thread
   */
  Optional<NodeWatch> nodeWatch(
      ApiClient client, String name, Duration maxWait, NodeListing listing)
      throws GuestAccessException, ApiException {
    CompletableFuture<NodeWatch> mine = new CompletableFuture<>();
    CompletableFuture<NodeWatch> known;
    synchronized (this) {
      // Watches over for good (idle, refused, or of a client replaced since) are forgotten.
      nodeWatches.values().removeIf(f -> f.isDone() && (f.join() == null || f.join().over()));
      known = nodeWatches.get(client);
      if (known == null) {
        nodeWatches.put(client, mine);
      }
    }
    if (known == null) {
      try {
        NodeWatch started = NodeWatch.start(client, listing.list(), name);
        log.debug("guest node watch opened cluster={}", name);
        mine.complete(started);
        return Optional.of(started);
      } catch (GuestAccessException e) {
        if (e.reason() == GuestAccessException.Reason.GuestAPIForbidden) {
          // The guest identity may not list nodes: its steps read them one by one, as they may.
          log.info("guest nodes may not be listed, read per step cluster={}", name);
          mine.complete(NodeWatch.refused(client, name));
          return Optional.empty();
        }
        forget(client, mine);
        throw e;
      } catch (ApiException | RuntimeException e) {
        forget(client, mine);
        throw e;
      }
    }
    try {
      NodeWatch watch = known.get(Math.max(0, maxWait.toMillis()), TimeUnit.MILLISECONDS);
      return watch != null && watch.current() ? Optional.of(watch) : Optional.empty();
    } catch (TimeoutException | ExecutionException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  /** A failed list is not kept: the next step lists again. */
  private void forget(ApiClient client, CompletableFuture<NodeWatch> failed) {
    synchronized (this) {
      nodeWatches.remove(client, failed);
    }
    failed.complete(null);
  }

  /**
   * A patch of ours over {@code before} gave {@code after}: the cluster's node watch, if any,
   * serves it until it has caught up.
   */
  void nodeWritten(ApiClient client, V1Node before, V1Node after) {
    startedNodeWatch(client).ifPresent(w -> w.wrote(before, after));
  }

  /**
   * A patch of ours of the node {@code name} was refused: it was made over a version that is no
   * longer current. The next step reads that node from the API, not from the watch.
   */
  void nodePatchRefused(ApiClient client, String name) {
    startedNodeWatch(client).ifPresent(w -> w.refused(name));
  }

  private Optional<NodeWatch> startedNodeWatch(ApiClient client) {
    CompletableFuture<NodeWatch> known;
    synchronized (this) {
      known = nodeWatches.get(client);
    }
    return Optional.ofNullable(known == null ? null : known.getNow(null));
  }

  @Override
  public boolean takeWake(String vmiKey) {
    return woken.remove(vmiKey);
  }

  /** The VMI's evacuation ended (or it is gone): stop watching its guest node. */
  private void end(String vmiKey) {
    Optional<SteppedDrains.Drain> ended = drains.end(vmiKey);
    ended.ifPresent(d -> log.debug("guest pod watch closed vmi={} node={}", vmiKey, d.node()));
    synchronized (this) {
      Blocked before = blocked.remove(vmiKey);
      freed.remove(vmiKey);
      if (before != null) {
        closeUnusedWatch(before.client());
      }
      ended.ifPresent(d -> closeUnusedWatch(d.client()));
    }
    woken.remove(vmiKey);
  }

  /** Drains under way, for metrics and tests. */
  public int open() {
    return drains.size();
  }

  @Override
  public void close() {
    synchronized (this) {
      nodeWatches
          .values()
          .forEach(
              f ->
                  f.thenAccept(
                      w -> {
                        if (w != null) {
                          w.close();
                        }
                      }));
      nodeWatches.clear();
      budgetWatches.values().forEach(BudgetWatch::close);
      budgetWatches.clear();
      blocked.clear();
    }
    drains.close();
  }
}
