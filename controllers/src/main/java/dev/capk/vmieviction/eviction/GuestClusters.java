package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.NodeWatch;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SteppedDrains;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.eviction.GuestClusters.GuestNodeDrainer.GuestNodeMatch;
import dev.capk.vmieviction.eviction.GuestClusters.GuestNodeDrainer.GuestNodeMatch.NodeReadiness;
import dev.capk.vmieviction.eviction.GuestNodeUncordoner.UncordonDecision;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.Metadata;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClient;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeCondition;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest clusters of the evacuations: connects a VMI to its guest cluster (only the Cluster the
 * tenant mapping allows), and keeps what each cluster's evacuations share.
 *
 * <p>Per VMI being evacuated, the drain of its guest node ({@link SteppedDrains}), whose pod watch
 * wakes the VMI's next step when pods leave. Per guest cluster client: one {@link NodeWatch}, read
 * instead of a GET each (it ends when unused for {@link NodeWatch#IDLE}); and, from the first
 * refusal by a PodDisruptionBudget to the end of the cluster's last drain, one {@link BudgetWatch},
 * whose budgets allowing again wake the drains they refused (kept while drains run: under a budget
 * that allows one disruption at a time each new watch would list every budget again).
 */
public final class GuestClusters implements GuestConnector, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(GuestClusters.class);

  private final Consumer<String> wake;
  private final SteppedDrains drains;

  /** VMIs woken by their pods or budgets, until their next step asks. */
  private final Set<String> woken = ConcurrentHashMap.newKeySet();

  /** Guarded by this: the budgets ({@code namespace/name}) that refused each VMI's last step. */
  private final Map<String, Set<String>> blocked = new HashMap<>();

  /** Guarded by this, as the next. */
  private final Map<ApiClient, BudgetWatch> budgetWatches = new IdentityHashMap<>();

  private final Map<ApiClient, NodeWatch> nodeWatches = new IdentityHashMap<>();

  private final GuestClients clients;
  private final TenantMapping tenants;
  private final EventSeriesRecorder nodeEventSeries;

  /**
   * The guest nodes' Event series, written on threads of their own, to a cluster through {@code
   * to}.
   */
  public static EventSeriesRecorder nodeEvents(int lanes) {
    return new EventSeriesRecorder(
        null,
        GuestNodeDrainer.EVENT_SOURCE,
        GuestNodeDrainer.NODE_OUTCOMES,
        Clock.systemUTC(),
        "guest-node-events",
        lanes);
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
            "guest-eviction-%d", DrainOptions.DEFAULT_EVICTION_RETRY_INTERVAL, maxRetry);
  }

  @Override
  public Guest connect(VirtualMachineInstance vmi, Optional<Duration> timeLeft)
      throws GuestAccessException {
    GuestClient client = clients.get(tenants.clusterOf(vmi));
    return new GuestNodeDrainer(timeLeft.map(client::until).orElse(client));
  }

  private void wakeUp(String vmiKey) {
    log.debug("guest drain woken vmi={}", vmiKey);
    woken.add(vmiKey);
    wake.accept(vmiKey);
  }

  /**
   * After a step through {@code client}: the budgets that refused the VMI's pods. Opens the
   * cluster's budget watch if needed; a budget it already sees allowing wakes the VMI at once.
   */
  private synchronized void blockedBy(String vmiKey, ApiClient client, Set<String> budgets) {
    if (budgets.isEmpty()) {
      blocked.remove(vmiKey);
      return;
    }
    blocked.put(vmiKey, Set.copyOf(budgets));
    BudgetWatch watch =
        budgetWatches.computeIfAbsent(
            client, c -> BudgetWatch.start(c, vmiKey, budget -> budgetAllows(c, budget)));
    if (budgets.stream().anyMatch(watch::allows)) {
      wakeUp(vmiKey);
    }
  }

  /**
   * A budget of the cluster {@code client} reaches allows a disruption: wake the drains it held.
   */
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
  private BudgetWatch budgetsFor(
      String vmiKey, ApiClient client, SteppedDrains.DrainMemory memory) {
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
   * The node watch of the guest cluster, started if none runs, once it has listed (within {@link
   * GuestNodeDrainer#NODE_LIST_WAIT}, cut to the deadline) and while it reaches the server; else
   * empty, and the caller reads the node itself, which names the trouble.
   */
  private Optional<NodeWatch> nodeWatch(GuestClient client) {
    NodeWatch watch;
    synchronized (this) {
      // Watches over for good (idle, refused, or of a client replaced since) are forgotten.
      nodeWatches.values().removeIf(NodeWatch::over);
      watch =
          nodeWatches.computeIfAbsent(
              client.apiClient(), c -> NodeWatch.start(c, client.cluster().toString()));
    }
    try {
      Duration maxWait = client.deadline().cap(GuestNodeDrainer.NODE_LIST_WAIT);
      return watch.awaitListed(maxWait) ? Optional.of(watch) : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  private synchronized Optional<NodeWatch> startedNodeWatch(ApiClient client) {
    return Optional.ofNullable(nodeWatches.get(client));
  }

  @Override
  public boolean takeWake(String vmiKey) {
    return woken.remove(vmiKey);
  }

  @Override
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

  /**
   * A guest cluster as the reconciler needs it: find the VMI's node, cordon it with our mark,
   * advance its drain by one step with the drain engine, uncordon. Node writes are {@link
   * Cordoner}'s JSON Patches of exactly the fields we change, guarded by {@code test}s of those
   * fields as read (not the node's resourceVersion, which every status heartbeat changes).
   */
  public final class GuestNodeDrainer implements Guest {

    /**
     * On a node gone unreachable, pods deleted longer ago than this are not waited for (kubectl's
     * {@code --skip-wait-for-delete-timeout}, as CAPK sets it).
     */
    static final Duration SKIP_WAIT_WHEN_UNREACHABLE = Duration.ofMinutes(5);

    static final String EVENT_SOURCE = "capk-vmi-eviction-controller";

    /** What an evacuation did to the node: written at every occurrence, never capped. */
    static final Set<String> NODE_OUTCOMES =
        Set.of(EventReasons.DRAIN_SUCCEEDED, EventReasons.UNCORDONED);

    private final GuestClient client;
    private final CoreV1Api core;
    private final EventSeriesRecorder nodeEvents;

    GuestNodeDrainer(GuestClient client) {
      this.client = client;
      this.core = client.core();
      this.nodeEvents = nodeEvents();
    }

    /** Requests this drainer sent (it serves one reconcile step), for the tenant's rate limit. */
    private final AtomicInteger requests = new AtomicInteger();

    @Override
    public Optional<Duration> tryEnterStep(boolean finishing) {
      return client.throttle().tryEnter(finishing);
    }

    @Override
    public void leaveStep() {
      client.throttle().leave(Math.max(1, requests.get()));
    }

    @Override
    public String cluster() {
      return client.cluster().toString();
    }

    /** How long a step waits for the node list another step of the same cluster is making. */
    static final Duration NODE_LIST_WAIT = Duration.ofSeconds(10);

    @Override
    public Optional<V1Node> findNode(String vmiName) throws GuestAccessException, ApiException {
      Optional<NodeWatch> watch = nodeWatch(client);
      if (watch.isPresent()) {
        Optional<V1Node> cached = GuestNodeMatch.choose(vmiName, watch.get().nodes());
        if (cached.isEmpty() || !watch.get().refusedSince(cached.get().getMetadata().getName())) {
          return cached;
        }
        // Our last patch of it was refused as made over an old version: the watch may be behind.
        return readNode(cached.get().getMetadata().getName());
      }
      Optional<V1Node> named = readNode(vmiName);
      if (named.isPresent()) {
        return named;
      }
      // Not named like the VMI: look for the providerID the KubeVirt cloud provider sets.
      return GuestNodeMatch.choose(vmiName, listNodes().getItems());
    }

    private Optional<V1Node> readNode(String name) throws GuestAccessException, ApiException {
      try {
        requests.incrementAndGet();
        return Optional.of(
            client.call(
                "reading node " + name, () -> core.readNode(name).buildCall(null), V1Node.class));
      } catch (ApiException e) {
        if (e.getCode() != 404) {
          throw e;
        }
        return Optional.empty();
      }
    }

    @Override
    public MarkedNodes markedNodes() throws GuestAccessException, ApiException {
      Optional<NodeWatch> watch = nodeWatch(client);
      return MarkedNodes.of(watch.isPresent() ? watch.get().nodes() : listNodes().getItems());
    }

    private V1NodeList listNodes() throws GuestAccessException, ApiException {
      requests.incrementAndGet();
      return client.call("listing nodes", () -> core.listNode().buildCall(null), V1NodeList.class);
    }

    @Override
    public V1Node cordonAndMark(V1Node node, String vmiUid)
        throws GuestAccessException, ApiException {
      return jsonPatchNode(
          node,
          n -> Cordoner.cordonPatch(n, EvictionAnnotations.CORDONED_BY, vmiUid),
          "cordoning node");
    }

    @Override
    public V1Node unmark(V1Node node) throws GuestAccessException, ApiException {
      String mark = EvictionAnnotations.CORDONED_BY;
      boolean uncordon = Cordoner.unschedulable(node);
      return jsonPatchNode(
          node,
          n -> uncordon ? Cordoner.uncordonPatch(n, mark) : Cordoner.removeMarkPatch(n, mark),
          uncordon ? "uncordoning node" : "removing cordon mark");
    }

    /**
     * A JSON Patch of the node ({@link Cordoner#write}); the node as it left it is served by the
     * node watch until the watch has it. A change of the node since it was read (or its removal) is
     * a 409, which the callers read again and retry, bounded; a refusal a {@link
     * GuestAccessException} naming the server's reason.
     */
    private V1Node jsonPatchNode(V1Node node, Function<V1Node, String> patchOf, String what)
        throws GuestAccessException, ApiException {
      String name = node.getMetadata().getName();
      Cordoner.Written written =
          Cordoner.write(node, patchOf, (n, patch) -> sendPatch(n, patch, what), this::readNode);
      Optional<NodeWatch> watch = startedNodeWatch(client.apiClient());
      if (written.reread()) {
        // Made over a version no longer current: the watch may be behind; the next step reads.
        watch.ifPresent(w -> w.refused(name));
      }
      switch (written.result()) {
        case APPLIED -> {
          watch.ifPresent(w -> w.wrote(node, written.node()));
          return written.node();
        }
        case REFUSED ->
            throw client.error(
                GuestAccessException.Reason.GuestAPIRefused,
                what + " " + name + " refused: " + ApiStatus.describeRefusal(written.answer()));
        default ->
            throw new ApiException(
                409, "guest node " + name + " changed since it was read (" + what + ")");
      }
    }

    private V1Node sendPatch(String name, String patch, String what)
        throws GuestAccessException, ApiException {
      requests.incrementAndGet();
      return client.call(
          what + " " + name,
          () ->
              RawApi.asJsonPatch(
                  client.apiClient(), core.patchNode(name, new V1Patch(patch)).buildCall(null)),
          V1Node.class);
    }

    @Override
    public DrainPass drainStep(
        String vmiKey, String nodeName, Duration requestTimeout, boolean nodeUnreachable)
        throws GuestAccessException, ApiException {
      DrainOptions options =
          DrainOptions.of(
              o -> {
                o.force = o.ignoreAllDaemonSets = o.deleteEmptyDirData = true;
                o.timeout = requestTimeout;
                // An unreachable kubelet never confirms deletions: skip pods deleted long ago.
                o.skipWaitForDeleteTimeout =
                    nodeUnreachable ? SKIP_WAIT_WHEN_UNREACHABLE : Duration.ZERO;
              });
      // The watch's pods; else one list of our own, which also starts a watch not running yet.
      SteppedDrains.Pods on =
          drains.pods(
              vmiKey,
              client.apiClient(),
              nodeName,
              (key, n) -> wakeUp(key),
              () -> {
                requests.incrementAndGet();
                return client.call(
                    "listing the pods of node " + nodeName,
                    () ->
                        core.listPodForAllNamespaces()
                            .fieldSelector("spec.nodeName=" + nodeName)
                            .buildCall(null),
                    V1PodList.class);
              });
      if (on.opened()) {
        log.debug("guest pod watch opened vmi={} node={}", vmiKey, nodeName);
      }
      // Budgets that allow a disruption again: the pods they refused go now.
      BudgetWatch budgets = budgetsFor(vmiKey, client.apiClient(), on.drain().memory());
      try {
        DrainStep step =
            client.guarded(
                "draining node " + nodeName,
                () ->
                    drains
                        .stepper(client.apiClient())
                        .step(nodeName, on.pods(), options, on.drain().memory(), budgets));
        requests.addAndGet(step.requests());
        if (!step.denied().isEmpty()) {
          // The tenant's RBAC refused us: no retry of this step can help, and it is not a budget's
          // doing.
          throw denied(nodeName, step);
        }
        return passOf(vmiKey, step);
      } catch (DrainRefusedException e) {
        return DrainPass.refused(e);
      } catch (GuestAccessException e) {
        throw e;
      } catch (ApiException e) {
        // The drain engine calls the guest API itself: classify its failures like ours.
        throw client.translate("draining node " + nodeName, e);
      } catch (Exception e) {
        throw client.failed("draining node " + nodeName, e);
      }
    }

    private GuestAccessException denied(String nodeName, DrainStep step) {
      PodRef first = step.denied().iterator().next();
      int others = step.denied().size() - 1;
      return client.error(
          GuestAccessException.Reason.GuestAPIForbidden,
          "draining node %s: pod %s: %s%s"
              .formatted(
                  nodeName,
                  first,
                  step.failed().get(first),
                  others > 0 ? " (and " + others + " more pod(s))" : ""));
    }

    private DrainPass passOf(String vmiKey, DrainStep step) {
      // While budgets refuse pods, their changes wake this drain (the retry timer stays).
      Set<String> budgets = new TreeSet<>();
      step.blockingBudgets().forEach((pod, b) -> budgets.addAll(DrainPass.budgetNames(pod, b)));
      blockedBy(vmiKey, client.apiClient(), budgets);
      return new DrainPass(step, List.of());
    }

    @Override
    public void nodeEvent(V1Node node, boolean warning, String reason, String message) {
      V1ObjectReference ref =
          new V1ObjectReference()
              .kind("Node")
              .apiVersion("v1")
              .name(node.getMetadata().getName())
              .uid(node.getMetadata().getUid());
      nodeEvents.record(ref, "", warning, reason, message);
    }

    /**
     * Guest node events as series, like the VMI's: one Event object per node and reason. One
     * attempt per call, through the circuit breaker and within the client's short timeouts, written
     * off the step's thread: an event is not worth slowing an evacuation down.
     */
    private EventSeriesRecorder nodeEvents() {
      EventStore plain = EventStore.of(core);
      EventStore store =
          new EventStore() {
            @Override
            public void create(CoreV1Event event) throws Exception {
              client.guarded(
                  "recording event",
                  () -> {
                    plain.create(event);
                    return null;
                  });
            }

            @Override
            public void mergePatch(String namespace, String name, String patch) throws Exception {
              client.guarded(
                  "recording event",
                  () -> {
                    plain.mergePatch(namespace, name, patch);
                    return null;
                  });
            }

            @Override
            public CoreV1Event read(String namespace, String name) throws Exception {
              return client.guarded("reading event", () -> plain.read(namespace, name));
            }

            @Override
            public String describe(Exception e) {
              return "cluster " + cluster() + ": " + ApiStatus.describeWithoutServerText(e);
            }
          };
      return nodeEventSeries.to(store);
    }

    /**
     * Which guest Node runs inside a VMI. CAPK names the VM's hostname, and so the guest Node,
     * after the VMI; the cloud provider sets {@code spec.providerID} to {@code
     * kubevirt://<vmi-name>}. The VMI's {@code status.evacuationNodeName} is the <em>infra</em>
     * node and is never looked up in the guest cluster. And how ready that Node is. Pure.
     */
    public static final class GuestNodeMatch {
      private GuestNodeMatch() {}

      public static final String PROVIDER_ID_PREFIX = "kubevirt://";

      public static String providerIdFor(String vmiName) {
        return PROVIDER_ID_PREFIX + vmiName;
      }

      /** The Node named like the VMI; else the Node whose providerID names the VMI; else none. */
      public static Optional<V1Node> choose(String vmiName, Collection<V1Node> nodes) {
        return nodes.stream()
            .filter(n -> n.getMetadata() != null && vmiName.equals(n.getMetadata().getName()))
            .findFirst()
            .or(
                () ->
                    nodes.stream()
                        .filter(
                            n ->
                                n.getSpec() != null
                                    && providerIdFor(vmiName).equals(n.getSpec().getProviderID()))
                        .findFirst());
      }

      /** A Node's Ready condition, reduced to what the drain decisions need. */
      public enum NodeReadiness {
        READY,
        NOT_READY,
        /** Ready is Unknown or absent: the node controller lost the kubelet. */
        UNREACHABLE;

        public static NodeReadiness of(V1Node node) {
          if (node.getStatus() == null || node.getStatus().getConditions() == null) {
            return UNREACHABLE;
          }
          for (V1NodeCondition c : node.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
              return switch (String.valueOf(c.getStatus())) {
                case "True" -> READY;
                case "False" -> NOT_READY;
                default -> UNREACHABLE;
              };
            }
          }
          return UNREACHABLE;
        }
      }
    }

    /**
     * What one step of a guest node's drain came to: the drain engine's step, and the reasons it
     * refused to start (kubectl's "cannot delete"; empty when it did not), in the reconciler's
     * terms.
     */
    public record DrainPass(DrainStep step, List<String> refusals) {

      /** How many pods a message names before it only counts the others. */
      static final int NAMED_PODS = 10;

      /** The longest reason given for one pod: a server's message can be long. */
      static final int MAX_REASON = 160;

      /**
       * The longest list of pods named: with the deadline warning's own words and the last failure
       * it stays within an Event's 1,024 characters, so the count of the others is never cut off.
       */
      static final int MAX_NAMED_TEXT = 640;

      /** The drain engine refused to start: nothing was evicted, every refused pod is pending. */
      static DrainPass refused(DrainRefusedException e) {
        List<String> refusals = new ArrayList<>();
        e.refusals().forEach((reason, pods) -> refusals.add(reason + ": " + pods));
        List<PodRef> pods = e.refusedPods();
        return new DrainPass(
            new DrainStep(
                false,
                0,
                0,
                pods,
                pods,
                List.of(),
                Map.of(),
                Map.of(),
                Set.of(),
                Map.of(),
                Optional.empty(),
                Map.of()),
            refusals);
      }

      public DrainPass {
        refusals = List.copyOf(refusals);
      }

      public boolean refused() {
        return !refusals.isEmpty();
      }

      /** Every pod still on the node that has to go counts, failed ones too: they have not left. */
      public int pending() {
        return step.pending().size();
      }

      /** A budget lives in its pod's namespace: named namespace/name, as kubectl users know it. */
      static Set<String> budgetNames(PodRef pod, Set<String> budgets) {
        return budgets.stream()
            .map(name -> name.contains("/") ? name : pod.namespace() + "/" + name)
            .collect(Collectors.toCollection(TreeSet::new));
      }

      /** What stands in the way, for the event that warns at the deadline. */
      public String blockers() {
        if (refused()) {
          return "drain refused: " + String.join("; ", refusals);
        }
        StringBuilder sb = new StringBuilder();
        if (!step.blockingBudgets().isEmpty()) {
          sb.append("PodDisruptionBudgets ");
          step.blockingBudgets()
              .forEach(
                  (pod, budgets) ->
                      sb.append(String.join(",", budgetNames(pod, budgets)))
                          .append(" (pod ")
                          .append(pod)
                          .append(") "));
        }
        if (!step.failed().isEmpty()) {
          sb.append("failed pods: ")
              .append(
                  step.failed().entrySet().stream()
                      .map(f -> f.getKey() + ": " + f.getValue())
                      .collect(Collectors.joining("; ")))
              .append(' ');
        }
        if (sb.length() == 0) {
          sb.append(pending()).append(" pod(s) still terminating");
        }
        return sb.toString().trim();
      }

      /**
       * The pods still on the node and why each stays, the first {@value #NAMED_PODS} by name
       * (fewer when their reasons are long) and then how many more; what {@link #blockers()} says
       * when the step did not name them, or when the drain was refused.
       */
      public String stillThere() {
        if (refused() || step.waiting().isEmpty()) {
          return blockers();
        }
        StringBuilder sb = new StringBuilder();
        int named = 0;
        for (Map.Entry<PodRef, String> pod : step.waiting().entrySet()) {
          String why = pod.getValue();
          String one =
              pod.getKey()
                  + " ("
                  + (why.length() > MAX_REASON ? why.substring(0, MAX_REASON) + "..." : why)
                  + ")";
          if (named == NAMED_PODS
              || (named > 0 && sb.length() + 2 + one.length() > MAX_NAMED_TEXT)) {
            break;
          }
          sb.append(named > 0 ? "; " : "").append(one);
          named++;
        }
        int more = Math.max(pending(), step.waiting().size()) - named;
        if (more > 0) {
          sb.append("; and ").append(more).append(" more");
        }
        return sb.toString();
      }
    }

    /**
     * Every guest node of one cluster with its role, readiness and our cordon mark: what a Running
     * VMI's uncordon check needs to know before it spends a request on its own node, and what the
     * quorum guard ({@link TenantAdmission}) needs. Pure.
     */
    public record MarkedNodes(List<Node> nodes) {

      /** One guest node as the tenant-safety policy sees it. */
      public record Node(
          String name,
          String providerId,
          boolean controlPlane,
          NodeReadiness readiness,
          boolean marked) {

        /** Is this the guest node of VMI {@code vmiName} (by name, or by providerID)? */
        public boolean runsIn(String vmiName) {
          return name.equals(vmiName) || GuestNodeMatch.providerIdFor(vmiName).equals(providerId);
        }
      }

      public static MarkedNodes of(Collection<V1Node> nodes) {
        return new MarkedNodes(
            nodes.stream()
                .filter(n -> n.getMetadata() != null && n.getMetadata().getName() != null)
                .map(
                    n ->
                        new Node(
                            n.getMetadata().getName(),
                            n.getSpec() == null ? null : n.getSpec().getProviderID(),
                            Metadata.label(n, CapkLabels.NODE_ROLE_CONTROL_PLANE) != null,
                            NodeReadiness.of(n),
                            UncordonDecision.markOf(n) != null))
                .toList());
      }

      /**
       * Could the guest node of VMI {@code vmiName} be one of the marked ones (by name, or by
       * providerID)?
       */
      public boolean mayHoldNodeOf(String vmiName) {
        return nodes.stream().anyMatch(n -> n.marked() && n.runsIn(vmiName));
      }
    }
  }
}
