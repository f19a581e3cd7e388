package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import com.google.common.util.concurrent.UncheckedExecutionException;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.NodeWatch;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.SteppedDrains;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClient;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1NodeList;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest clusters of the evacuations: connects a VMI to its guest cluster (only the Cluster the
 * tenant mapping allows), and keeps what each cluster's evacuations share.
 *
 * <p>Per VMI being evacuated, the drain of its guest node ({@link SteppedDrains}), whose pod watch
 * wakes the VMI's next step when pods leave. Per guest node being evacuated (or waiting to be
 * uncordoned): one {@link NodeWatch} of that node alone, read instead of a GET each (it ends when
 * unused for {@link NodeWatch#IDLE}). Per guest cluster client, from the first refusal by a
 * PodDisruptionBudget to the end of the cluster's last drain, one {@link BudgetWatch} of the
 * budgets that refused its drains (one watch each), whose budgets allowing again wake the drains
 * they refused (kept while drains run: under a budget that allows one disruption at a time each new
 * watch would list the budget again). Not final: the reconciler's tests fake {@link #connect}.
 */
public class GuestClusters implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(GuestClusters.class);

  private final Consumer<String> wake;
  final SteppedDrains drains;

  /** VMIs woken by their pods or budgets, until their next step asks. */
  private final Set<String> woken = ConcurrentHashMap.newKeySet();

  /** Guarded by this: the budgets ({@code namespace/name}) that refused each VMI's last step. */
  private final Map<String, Set<String>> blocked = new HashMap<>();

  /** Guarded by this, as the next. */
  private final Map<ApiClient, BudgetWatch> budgetWatches = new IdentityHashMap<>();

  /**
   * VMIs (by UID) whose guest node is known to carry no mark of ours, so that the uncordon checks
   * of Running VMIs spend no guest request on them; a VMI's entry goes before its node is cordoned.
   */
  final Cache<String, Boolean> unmarked =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterWrite(6, TimeUnit.HOURS).build();

  /** A guest node, by the client that reads it (a client is equal only to itself). */
  private record NodeKey(ApiClient client, String node) {}

  private final Map<NodeKey, NodeWatch> nodeWatches = new HashMap<>();

  /**
   * Per VMI (by client and VMI name), the name of its guest node where that is not the VMI's name
   * (found by providerID); forgotten when the node is gone, or unused for an hour.
   */
  private final Cache<NodeKey, String> providedNodes =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterAccess(1, TimeUnit.HOURS).build();

  /**
   * Per guest client, the node list in which the uncordon checks of Running VMIs look for a
   * providerID, shared for 10 s: a restart checks every Running VMI at once, and each whose node is
   * not named like it would otherwise list every node of its cluster (VMIs × nodes decoded). A node
   * that joined since the list cannot carry a mark of ours for a VMI Running now: marking it takes
   * an evacuation, a deletion and a new VMI. The evacuations' own lookups list afresh.
   */
  private final Cache<ApiClient, V1NodeList> checkLists =
      CacheBuilder.newBuilder().weakKeys().expireAfterWrite(10, TimeUnit.SECONDS).build();

  private final GuestClients clients;
  private final TenantMapping tenants;
  final EventSeriesRecorder nodeEventSeries;

  /** How long a step waits for the node list another step of the same cluster is making. */
  static final Duration NODE_LIST_WAIT = Duration.ofSeconds(10);

  /**
   * The guest nodes' Event series, written on threads of their own (to a cluster: through its
   * store); what an evacuation did to a node (drained, uncordoned) is written at every occurrence,
   * never capped.
   */
  public static EventSeriesRecorder nodeEvents(int lanes) {
    Set<String> outcomes = Set.of(VmiEvents.DRAIN_SUCCEEDED, VmiEvents.UNCORDONED);
    String source = "capk-vmi-eviction-controller";
    return new EventSeriesRecorder(
        null, source, outcomes, Clock.systemUTC(), "guest-node-events", lanes);
  }

  /**
   * @param tenants which Cluster a VMI may reach
   * @param nodeEvents the guest nodes' Event series (written off the steps' threads), any cluster's
   * @param wake enqueues a VMI (by {@code namespace/name}) for its next step
   * @param maxRetry the longest wait between two evictions of a refused pod
   */
  public GuestClusters(
      GuestClients clients,
      TenantMapping tenants,
      EventSeriesRecorder nodeEvents,
      Consumer<String> wake,
      Duration maxRetry) {
    this.clients = clients;
    this.tenants = tenants;
    this.nodeEventSeries = nodeEvents;
    this.wake = wake;
    this.drains =
        new SteppedDrains(
            "guest-eviction-", DrainOptions.DEFAULT_EVICTION_RETRY_INTERVAL, maxRetry);
  }

  /**
   * The guest cluster of the VMI for one step, no request of which runs past {@code timeLeft} (the
   * VMI's deadline; empty: none, each request still has its own bound).
   */
  public Guest connect(VirtualMachineInstance vmi, Optional<Duration> timeLeft)
      throws GuestAccessException {
    GuestClient client = clients.get(tenants.clusterOf(vmi));
    return new Guest(this, timeLeft.map(client::until).orElse(client));
  }

  void wakeUp(String vmiKey) {
    log.debug("guest drain woken vmi={}", vmiKey);
    woken.add(vmiKey);
    wake.accept(vmiKey);
  }

  /**
   * After a step through {@code client}: the budgets that refused the VMI's pods. Opens the
   * cluster's budget watch if needed; a budget it already sees allowing wakes the VMI at once.
   */
  synchronized void blockedBy(String vmiKey, ApiClient client, Set<String> budgets) {
    if (budgets.isEmpty()) {
      blocked.remove(vmiKey);
      return;
    }
    blocked.put(vmiKey, Set.copyOf(budgets));
    BudgetWatch watch =
        budgetWatches.computeIfAbsent(
            client, c -> BudgetWatch.start(c, vmiKey, budget -> budgetAllows(c, budget)));
    watch.follow(budgets);
    if (budgets.stream().anyMatch(watch::allows)) {
      wakeUp(vmiKey);
    }
  }

  /** A budget of {@code client}'s cluster allows a disruption: wake the drains it held. */
  private synchronized void budgetAllows(ApiClient client, String budget) {
    blocked.forEach(
        (vmiKey, budgets) -> {
          if (budgets.contains(budget)
              && drains.get(vmiKey).map(d -> d.client() == client).orElse(false)) {
            wakeUp(vmiKey);
          }
        });
  }

  /**
   * What the cluster's budget watch knows, so a step sends no more evictions than a budget allows
   * (nothing while no drain of the cluster was refused by a budget yet); the budgets that refused
   * the VMI's last step and allow a disruption now are handed to its drain's memory.
   */
  BudgetWatch budgetsFor(String vmiKey, ApiClient client, SteppedDrains.DrainMemory memory) {
    BudgetWatch watch;
    Set<String> refused;
    synchronized (this) {
      watch = budgetWatches.get(client);
      refused = blocked.getOrDefault(vmiKey, Set.of());
    }
    if (watch == null) {
      return BudgetWatch.NONE;
    }
    memory.budgetsAllow(refused.stream().filter(watch::allows).collect(Collectors.toSet()));
    return watch;
  }

  /**
   * The watch of the guest node {@code node}, started if none runs, once it has listed (within
   * {@link #NODE_LIST_WAIT}, cut to the deadline) and while it reaches the server; else empty, and
   * the caller reads the node itself, which names the trouble.
   */
  Optional<NodeWatch> nodeWatch(GuestClient client, String node) {
    NodeWatch watch = watchOf(client, node);
    try {
      Duration maxWait = client.deadline().cap(NODE_LIST_WAIT);
      return watch.awaitListed(maxWait) ? Optional.of(watch) : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  /**
   * The name of the VMI's guest node: the VMI's name, unless a node whose providerID names the VMI
   * was found under another name ({@link #nodeNamed}).
   */
  String nodeNameOf(ApiClient client, String vmiName) {
    String provided = providedNodes.getIfPresent(new NodeKey(client, vmiName));
    return provided != null ? provided : vmiName;
  }

  /** The node list for the uncordon checks of {@code client}'s cluster: one list at a time. */
  V1NodeList checkList(ApiClient client, Callable<V1NodeList> list)
      throws GuestAccessException, ApiException {
    try {
      return checkLists.get(client, list);
    } catch (ExecutionException | UncheckedExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof GuestAccessException g) {
        throw g;
      }
      if (cause instanceof ApiException a) {
        throw a;
      }
      throw new IllegalStateException(cause);
    }
  }

  /** The VMI's guest node found by providerID is {@code node} (null: none found). */
  void nodeNamed(ApiClient client, String vmiName, String node) {
    NodeKey key = new NodeKey(client, vmiName);
    if (node == null || node.equals(vmiName)) {
      providedNodes.invalidate(key);
    } else {
      providedNodes.put(key, node);
    }
  }

  /** The watch of the guest node {@code node}, started if none runs; not waited for. */
  synchronized NodeWatch watchOf(GuestClient client, String node) {
    NodeKey key = new NodeKey(client.apiClient(), node);
    NodeWatch running = nodeWatches.get(key);
    if (running != null && !running.over()) {
      return running; // every step asks: no scan of the other nodes' watches here
    }
    // Watches over for good (idle, refused, or of a client replaced since) are forgotten when a
    // new one starts.
    nodeWatches.values().removeIf(NodeWatch::over);
    NodeWatch started = NodeWatch.start(key.client(), client.cluster().toString(), node);
    nodeWatches.put(key, started);
    return started;
  }

  synchronized Optional<NodeWatch> startedNodeWatch(ApiClient client, String node) {
    return Optional.ofNullable(nodeWatches.get(new NodeKey(client, node)));
  }

  /** True once after its pods or budgets woke the VMI: its next step may finish the drain. */
  public boolean takeWake(String vmiKey) {
    return woken.remove(vmiKey);
  }

  /** The evacuation of the VMI ended: stop what its guest node's drain keeps. */
  public void evacuationEnded(String vmiKey) {
    drains.end(vmiKey);
    synchronized (this) {
      blocked.remove(vmiKey);
      // A budget watch ends with the last drain through its client.
      Set<ApiClient> draining = Collections.newSetFromMap(new IdentityHashMap<>());
      drains.keys().forEach(k -> drains.get(k).ifPresent(d -> draining.add(d.client())));
      List.copyOf(budgetWatches.keySet()).stream()
          .filter(c -> !draining.contains(c))
          .forEach(c -> budgetWatches.remove(c).close());
    }
    woken.remove(vmiKey);
  }

  @Override
  public void close() {
    synchronized (this) {
      nodeWatches.values().forEach(NodeWatch::close);
      nodeWatches.clear();
      budgetWatches.values().forEach(BudgetWatch::close);
      budgetWatches.clear();
      blocked.clear();
    }
    drains.close();
  }
}
