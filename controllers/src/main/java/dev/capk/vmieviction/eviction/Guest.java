package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.NodeWatch;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SteppedDrains;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.eviction.Evacuator.UncordonDecision;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClient;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest cluster of one VMI for one reconcile step ({@link GuestClusters#connect}): find the
 * VMI's node, cordon it with our mark, advance its drain by one step with the drain engine,
 * uncordon. Every call is bounded in time; an unreachable or failing guest API shows as a {@link
 * GuestAccessException} with a specific reason. Node writes are {@link Cordoner}'s JSON Patches of
 * exactly the fields we change, guarded by {@code test}s of those fields as read (not the node's
 * resourceVersion, which every status heartbeat changes): they apply only while the node is as read
 * (409 otherwise) and return it as they left it. Not final: the reconciler's tests fake it.
 */
public class Guest {

  private static final Logger log = LoggerFactory.getLogger(Guest.class);

  /**
   * On a node gone unreachable, pods deleted longer ago than this are not waited for (kubectl's
   * {@code --skip-wait-for-delete-timeout}, as CAPK sets it).
   */
  static final Duration SKIP_WAIT_WHEN_UNREACHABLE = Duration.ofMinutes(5);

  private final GuestClusters guests;
  private final GuestClient client;

  /** Requests sent for this step, for the tenant's rate limit. */
  private final AtomicInteger requests = new AtomicInteger();

  Guest(GuestClusters guests, GuestClient client) {
    this.guests = guests;
    this.client = client;
  }

  /**
   * Lets the step talk to this guest cluster (empty), or says how long to wait (the cluster's
   * request rate or steps at once are used up): never waits. A step that may finish a drain ({@code
   * finishing}: its guest node's pods left) is always admitted. An admitted step ends with {@link
   * #leaveStep}, which frees its slot and pays for the requests it sent.
   */
  public Optional<Duration> tryEnterStep(boolean finishing) {
    return client.throttle().tryEnter(finishing);
  }

  public void leaveStep() {
    client.throttle().leave(Math.max(1, requests.get()));
  }

  /** {@code namespace/name} of the Cluster, for logs and events. */
  public String cluster() {
    return client.cluster().toString();
  }

  /**
   * The guest Node running in the VMI ({@link GuestNodeMatch}): the Node named like the VMI from
   * its watch while that reaches the server, else read; else the Node whose providerID names the
   * VMI, from a list. {@code watch}: start the named node's watch if none runs (an evacuation's
   * steps); without it a running watch still serves, else one GET (a check of a Running VMI).
   */
  public Optional<V1Node> findNode(String vmiName, boolean watch)
      throws GuestAccessException, ApiException {
    // The node found by providerID before, if any, is watched under its own name.
    String name = guests.nodeNameOf(client.apiClient(), vmiName);
    Optional<NodeWatch> watching =
        watch
            ? guests.nodeWatch(client, name)
            : guests.startedNodeWatch(client.apiClient(), name).filter(NodeWatch::current);
    Optional<V1Node> named;
    if (watching.isPresent()) {
      named = watching.get().node(name);
      if (named.isPresent() && watching.get().refusedSince(name)) {
        // Our last patch of it was refused as made over an old version: the watch may be behind.
        named = readNode(name);
      }
    } else {
      named = readNode(name);
    }
    if (named.isPresent() && GuestNodeMatch.runsIn(vmiName, named.get())) {
      return named;
    }
    // Not named like the VMI: look for the providerID the KubeVirt cloud provider sets (a check's
    // list shared with the other checks of the cluster, an evacuation's its own).
    V1NodeList nodes = watch ? listNodes() : guests.checkList(client.apiClient(), this::listNodes);
    Optional<V1Node> provided = GuestNodeMatch.choose(vmiName, nodes.getItems());
    guests.nodeNamed(
        client.apiClient(), vmiName, provided.map(n -> n.getMetadata().getName()).orElse(null));
    return provided;
  }

  /** Starts the watch of the node named {@code nodeName} if none runs; does not wait for it. */
  public void watchNode(String nodeName) {
    guests.watchOf(client, nodeName);
  }

  private Optional<V1Node> readNode(String name) throws GuestAccessException, ApiException {
    try {
      requests.incrementAndGet();
      return Optional.of(
          client.call(
              "reading node " + name,
              () -> client.core().readNode(name).buildCall(null),
              V1Node.class));
    } catch (ApiException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      return Optional.empty();
    }
  }

  /** Every node of the cluster and our cordon marks, from one list (no cache keeps them all). */
  public MarkedNodes markedNodes() throws GuestAccessException, ApiException {
    return MarkedNodes.of(listNodes().getItems());
  }

  private V1NodeList listNodes() throws GuestAccessException, ApiException {
    requests.incrementAndGet();
    return client.call(
        "listing nodes", () -> client.core().listNode().buildCall(null), V1NodeList.class);
  }

  /** Cordons the node and marks it as cordoned by us for the VMI, in one patch. */
  public V1Node cordonAndMark(V1Node node, String vmiUid)
      throws GuestAccessException, ApiException {
    return jsonPatchNode(
        node,
        n -> Cordoner.cordonPatch(n, EvictionAnnotations.CORDONED_BY, vmiUid),
        "cordoning node");
  }

  /**
   * Removes our mark and, if the node is cordoned as read, uncordons it, in one patch (a cordon
   * made since it was read is never lifted).
   */
  public V1Node unmark(V1Node node) throws GuestAccessException, ApiException {
    String mark = EvictionAnnotations.CORDONED_BY;
    boolean uncordon = Cordoner.unschedulable(node);
    return jsonPatchNode(
        node,
        n -> uncordon ? Cordoner.uncordonPatch(n, mark) : Cordoner.removeMarkPatch(n, mark),
        uncordon ? "uncordoning node" : "removing cordon mark");
  }

  /**
   * A JSON Patch of the node ({@link Cordoner#write}); the node as it left it is served by the node
   * watch until the watch has it. A change of the node since it was read (or its removal) is a 409,
   * which the callers read again and retry, bounded; a refusal a {@link GuestAccessException}
   * naming the server's reason.
   */
  private V1Node jsonPatchNode(V1Node node, Function<V1Node, String> patchOf, String what)
      throws GuestAccessException, ApiException {
    String name = node.getMetadata().getName();
    Cordoner.Written<String> written =
        Cordoner.write(
            node,
            n -> Optional.of(patchOf.apply(n)),
            Function.identity(),
            1,
            (n, patch) -> sendPatch(n, patch, what),
            this::readNode);
    Optional<NodeWatch> watch = guests.startedNodeWatch(client.apiClient(), name);
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
              what + " " + name + " refused: " + RawApi.describeRefusal(written.answer()));
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
                client.apiClient(),
                client.core().patchNode(name, new V1Patch(patch)).buildCall(null)),
        V1Node.class);
  }

  /**
   * One step of the node's drain for the VMI {@code vmiKey}: evicts the pods that are due and
   * returns without waiting for them to leave (a watch on the node's pods wakes the VMI's next
   * step). Each eviction request ends within {@code requestTimeout}.
   */
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
        guests.drains.pods(
            vmiKey,
            client.apiClient(),
            nodeName,
            (key, n) -> guests.wakeUp(key),
            () -> {
              requests.incrementAndGet();
              return client.call(
                  "listing the pods of node " + nodeName,
                  () ->
                      client
                          .core()
                          .listPodForAllNamespaces()
                          .fieldSelector("spec.nodeName=" + nodeName)
                          .buildCall(null),
                  V1PodList.class);
            });
    // Budgets that allow a disruption again: the pods they refused go now.
    BudgetWatch budgets = guests.budgetsFor(vmiKey, client.apiClient(), on.drain().memory());
    // The drain engine calls the guest API itself: its failures are classified like ours.
    return client.guardedStep(
        "draining node " + nodeName,
        () -> {
          DrainStep step;
          try {
            step =
                guests.drains.step(
                    client.apiClient(), nodeName, on.pods(), options, on.drain().memory(), budgets);
          } catch (DrainRefusedException e) {
            return DrainPass.refused(e);
          }
          requests.addAndGet(step.requests());
          if (!step.denied().isEmpty()) {
            // The tenant's RBAC refused us: no retry can help, and it is not a budget's doing.
            throw denied(nodeName, step);
          }
          // While budgets refuse pods, their changes wake this drain (the retry timer stays).
          Set<String> blocking = new TreeSet<>();
          step.blockingBudgets()
              .forEach((pod, b) -> blocking.addAll(DrainPass.budgetNames(pod, b)));
          guests.blockedBy(vmiKey, client.apiClient(), blocking);
          return new DrainPass(step, List.of());
        });
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

  /**
   * Best effort, never throws: an Event on the guest Node, in a series like the VMI's (one Event
   * object per node and reason). One attempt, through the circuit breaker and within the client's
   * short timeouts, written off the step's thread: an event is not worth slowing an evacuation.
   */
  public void nodeEvent(V1Node node, boolean warning, String reason, String message) {
    EventStore store =
        EventStore.of(
            client.core(),
            call -> () -> client.guarded("recording event", call),
            e -> "cluster " + cluster() + ": " + RawApi.describeWithoutServerText(e));
    V1ObjectReference ref =
        new V1ObjectReference()
            .kind("Node")
            .apiVersion("v1")
            .name(node.getMetadata().getName())
            .uid(node.getMetadata().getUid());
    guests.nodeEventSeries.record(store, ref, "", warning, reason, message);
  }

  /**
   * Which guest Node runs inside a VMI. CAPK names the VM's hostname, and so the guest Node, after
   * the VMI; the cloud provider sets {@code spec.providerID} to {@code kubevirt://<vmi-name>}. The
   * VMI's {@code status.evacuationNodeName} is the <em>infra</em> node and is never looked up in
   * the guest cluster. And how ready that Node is. Pure.
   */
  public static final class GuestNodeMatch {
    private GuestNodeMatch() {}

    public static String providerIdFor(String vmiName) {
      return "kubevirt://" + vmiName;
    }

    /** The Node named like the VMI; else the Node whose providerID names the VMI; else none. */
    public static Optional<V1Node> choose(String vmiName, Collection<V1Node> nodes) {
      return nodes.stream()
          .filter(n -> n.getMetadata() != null && vmiName.equals(n.getMetadata().getName()))
          .findFirst()
          .or(() -> nodes.stream().filter(n -> provides(vmiName, n)).findFirst());
    }

    /** Is {@code node} the VMI's: named like it, or its providerID naming it? */
    static boolean runsIn(String vmiName, V1Node node) {
      return runsIn(vmiName, node.getMetadata().getName(), providerIdOf(node));
    }

    /** Is the node named {@code nodeName} with {@code providerId} the VMI's? */
    static boolean runsIn(String vmiName, String nodeName, String providerId) {
      return vmiName.equals(nodeName) || providerIdFor(vmiName).equals(providerId);
    }

    private static boolean provides(String vmiName, V1Node node) {
      return providerIdFor(vmiName).equals(providerIdOf(node));
    }

    private static String providerIdOf(V1Node node) {
      return node.getSpec() == null ? null : node.getSpec().getProviderID();
    }

    /** A Node's Ready condition, reduced to what the drain decisions need. */
    public enum NodeReadiness {
      READY,
      NOT_READY,
      /** Ready is Unknown or absent: the node controller lost the kubelet. */
      UNREACHABLE;

      public static NodeReadiness of(V1Node node) {
        String ready =
            Optional.ofNullable(node.getStatus()).map(V1NodeStatus::getConditions).stream()
                .flatMap(List::stream)
                .filter(c -> "Ready".equals(c.getType()))
                .map(c -> String.valueOf(c.getStatus()))
                .findFirst()
                .orElse(null);
        return "True".equals(ready) ? READY : "False".equals(ready) ? NOT_READY : UNREACHABLE;
      }
    }
  }

  /**
   * What one step of a guest node's drain came to: the drain engine's step, and the reasons it
   * refused to start (kubectl's "cannot delete"; empty when it did not), in the reconciler's terms.
   */
  public record DrainPass(DrainStep step, List<String> refusals) {

    /** How many pods a message names before it only counts the others. */
    static final int NAMED_PODS = 10;

    /** The longest reason given for one pod: a server's message can be long. */
    static final int MAX_REASON = 160;

    /**
     * The longest list of pods named: with the deadline warning's own words and the last failure it
     * stays within an Event's 1,024 characters, so the count of the others is never cut off.
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
     * The pods still on the node and why each stays, the first {@value #NAMED_PODS} by name (fewer
     * when their reasons are long) and then how many more; what {@link #blockers()} says when the
     * step did not name them, or when the drain was refused.
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
        if (named == NAMED_PODS || (named > 0 && sb.length() + 2 + one.length() > MAX_NAMED_TEXT)) {
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
   * Every guest node of one cluster with its role, readiness and our cordon mark: what the quorum
   * guard ({@link TenantAdmission}) needs. Pure.
   */
  public record MarkedNodes(List<Node> nodes) {

    /** One guest node as the tenant-safety policy sees it. */
    public record Node(
        String name,
        String providerId,
        boolean controlPlane,
        GuestNodeMatch.NodeReadiness readiness,
        boolean marked) {

      /** Is this the guest node of VMI {@code vmiName} (by name, or by providerID)? */
      public boolean runsIn(String vmiName) {
        return GuestNodeMatch.runsIn(vmiName, name, providerId);
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
                          GuestNodeMatch.providerIdOf(n),
                          LenientJson.label(n, CapkLabels.NODE_ROLE_CONTROL_PLANE) != null,
                          GuestNodeMatch.NodeReadiness.of(n),
                          UncordonDecision.markOf(n) != null))
              .toList());
    }
  }
}
