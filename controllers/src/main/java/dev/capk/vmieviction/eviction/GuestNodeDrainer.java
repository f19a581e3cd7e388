package dev.capk.vmieviction.eviction;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainResult;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.events.EventSeriesBook;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClient;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A guest cluster as the reconciler needs it: find the VMI's node, cordon it with our mark, run a
 * bounded drain pass with the drain engine, uncordon. Node writes are JSON merge patches of exactly
 * the fields we change, guarded by the node's resourceVersion.
 */
public final class GuestNodeDrainer implements Guest {

  /** kubectl drain flags the controller uses (CAPK's choice) and the unreachable-node rule. */
  public record Settings(int maxConcurrentEvictions, Duration skipWaitWhenUnreachable) {
    public static Settings defaults() {
      return new Settings(DrainOptions.DEFAULT_MAX_CONCURRENT_EVICTIONS, Duration.ofMinutes(5));
    }
  }

  static final String EVENT_SOURCE = "capk-vmi-eviction-controller";

  /** What an evacuation did to the node: written at every occurrence, never capped. */
  static final Set<String> NODE_OUTCOMES =
      Set.of(EventReasons.DRAIN_SUCCEEDED, EventReasons.UNCORDONED);

  private final GuestClient client;
  private final CoreV1Api core;
  private final Settings settings;
  private final EventSeriesRecorder nodeEvents;

  /** {@code nodeEventSeries} outlives this drainer: shared by every guest cluster's node events. */
  public GuestNodeDrainer(GuestClient client, Settings settings, EventSeriesBook nodeEventSeries) {
    this.client = client;
    this.core = client.core();
    this.settings = settings;
    this.nodeEvents = nodeEvents(nodeEventSeries);
  }

  @Override
  public String cluster() {
    return client.cluster().toString();
  }

  @Override
  public Optional<V1Node> findNode(String vmiName) throws GuestAccessException, ApiException {
    try {
      return Optional.of(
          client.call(
              "reading node " + vmiName,
              () -> core.readNode(vmiName).buildCall(null),
              V1Node.class));
    } catch (ApiException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
    // Not named like the VMI: look for the providerID the KubeVirt cloud provider sets.
    return GuestNodeMatch.choose(vmiName, listNodes());
  }

  @Override
  public MarkedNodes markedNodes() throws GuestAccessException, ApiException {
    return MarkedNodes.of(listNodes());
  }

  private List<V1Node> listNodes() throws GuestAccessException, ApiException {
    V1NodeList list =
        client.call("listing nodes", () -> core.listNode().buildCall(null), V1NodeList.class);
    return list.getItems();
  }

  @Override
  public void cordonAndMark(V1Node node, String vmiUid) throws GuestAccessException, ApiException {
    patchNode(
        node, nodePatch(node.getMetadata().getResourceVersion(), true, vmiUid), "cordoning node");
  }

  @Override
  public void uncordonAndUnmark(V1Node node) throws GuestAccessException, ApiException {
    patchNode(
        node, nodePatch(node.getMetadata().getResourceVersion(), false, null), "uncordoning node");
  }

  @Override
  public void removeMark(V1Node node) throws GuestAccessException, ApiException {
    JsonObject annotations = new JsonObject();
    annotations.add(EvictionAnnotations.CORDONED_BY, JsonNull.INSTANCE);
    JsonObject metadata = new JsonObject();
    metadata.addProperty("resourceVersion", node.getMetadata().getResourceVersion());
    metadata.add("annotations", annotations);
    JsonObject patch = new JsonObject();
    patch.add("metadata", metadata);
    patchNode(node, patch.toString(), "removing cordon mark");
  }

  /**
   * Cordon: {@code unschedulable: true} and our mark; uncordon: {@code unschedulable: null} (the
   * default, false) and the mark removed. One patch, so the mark and the cordon never disagree.
   */
  static String nodePatch(String resourceVersion, boolean cordon, String vmiUid) {
    JsonObject annotations = new JsonObject();
    if (cordon) {
      annotations.addProperty(EvictionAnnotations.CORDONED_BY, vmiUid);
    } else {
      annotations.add(EvictionAnnotations.CORDONED_BY, JsonNull.INSTANCE);
    }
    JsonObject metadata = new JsonObject();
    if (resourceVersion != null) {
      metadata.addProperty("resourceVersion", resourceVersion);
    }
    metadata.add("annotations", annotations);
    JsonObject spec = new JsonObject();
    if (cordon) {
      spec.addProperty("unschedulable", true);
    } else {
      spec.add("unschedulable", JsonNull.INSTANCE);
    }
    JsonObject patch = new JsonObject();
    patch.add("metadata", metadata);
    patch.add("spec", spec);
    return patch.toString();
  }

  private void patchNode(V1Node node, String patch, String what)
      throws GuestAccessException, ApiException {
    String name = node.getMetadata().getName();
    client.call(
        what + " " + name,
        () ->
            RawApi.asMergePatch(
                client.apiClient(), core.patchNode(name, new V1Patch(patch)).buildCall(null)),
        V1Node.class);
  }

  @Override
  public DrainPass drain(String nodeName, Duration timeout, boolean nodeUnreachable)
      throws GuestAccessException, ApiException {
    DrainOptions options =
        DrainOptions.builder()
            .force(true)
            .ignoreAllDaemonSets(true)
            .deleteEmptyDirData(true)
            .gracePeriodSeconds(-1)
            .timeout(timeout)
            // An unreachable kubelet never confirms deletions: do not wait for pods deleted long
            // ago.
            .skipWaitForDeleteTimeout(
                nodeUnreachable ? settings.skipWaitWhenUnreachable() : Duration.ZERO)
            .maxConcurrentEvictions(settings.maxConcurrentEvictions())
            .build();
    try {
      DrainResult result =
          client.guarded(
              "draining node " + nodeName,
              () -> new NodeDrainer(client.apiClient()).drain(nodeName, options));
      if (!result.denied().isEmpty()) {
        // The tenant's RBAC refused us: no retry of this pass can help, and it is not a budget's
        // doing.
        PodRef first = result.denied().iterator().next();
        int others = result.denied().size() - 1;
        throw new GuestAccessException(
            GuestAccessException.Reason.GuestAPIForbidden,
            "guest cluster "
                + cluster()
                + ": draining node "
                + nodeName
                + ": pod "
                + first
                + ": "
                + result.failed().get(first)
                + (others > 0 ? " (and " + others + " more pod(s))" : ""));
      }
      List<String> failures = new ArrayList<>();
      result.failed().forEach((pod, reason) -> failures.add(pod + ": " + reason));
      result.interruption().ifPresent(why -> failures.add("drain interrupted: " + why));
      Map<String, Set<String>> budgets = new LinkedHashMap<>();
      // A budget lives in its pod's namespace: name it namespace/name, as kubectl users know it.
      result
          .blockingBudgets()
          .forEach(
              (pod, b) ->
                  budgets.put(
                      pod.toString(),
                      b.stream()
                          .map(name -> name.contains("/") ? name : pod.namespace() + "/" + name)
                          .collect(
                              java.util.stream.Collectors.toCollection(java.util.TreeSet::new))));
      return new DrainPass(
          result.isComplete(),
          result.evicted().size(),
          // Every pod still on the node counts, failed ones too: they have not left.
          result.pending().size() + result.failed().size(),
          budgets,
          failures,
          List.of(),
          result.summary());
    } catch (DrainRefusedException e) {
      List<String> refusals = new ArrayList<>();
      e.refusals().forEach((reason, pods) -> refusals.add(reason + ": " + pods));
      return new DrainPass(
          false, 0, e.refusedPods().size(), Map.of(), List.of(), refusals, e.getMessage());
    } catch (GuestAccessException e) {
      throw e;
    } catch (ApiException e) {
      // The drain engine calls the guest API itself: classify its failures like ours.
      throw client.translate("draining node " + nodeName, e);
    } catch (Exception e) {
      throw client.failed("draining node " + nodeName, e);
    }
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
   * Guest node events as series, like the VMI's: one Event object per node and reason. One attempt
   * per call, through the circuit breaker and within the client's short timeouts: an event is not
   * worth slowing an evacuation down.
   */
  private EventSeriesRecorder nodeEvents(EventSeriesBook book) {
    EventStore store =
        new EventStore() {
          @Override
          public void create(CoreV1Event event) throws Exception {
            client.callOnce(
                "recording event",
                () ->
                    core.createNamespacedEvent(event.getMetadata().getNamespace(), event)
                        .buildCall(null),
                null);
          }

          @Override
          public void mergePatch(String namespace, String name, String patch) throws Exception {
            client.callOnce(
                "recording event",
                () ->
                    RawApi.asMergePatch(
                        client.apiClient(),
                        core.patchNamespacedEvent(name, namespace, new V1Patch(patch))
                            .buildCall(null)),
                null);
          }

          @Override
          public CoreV1Event read(String namespace, String name) throws Exception {
            return client.callOnce(
                "reading event",
                () -> core.readNamespacedEvent(name, namespace).buildCall(null),
                CoreV1Event.class);
          }

          @Override
          public String describe(Exception e) {
            return "cluster " + cluster() + ": " + ApiStatus.describeWithoutServerText(e);
          }
        };
    return new EventSeriesRecorder(book, store, EVENT_SOURCE, NODE_OUTCOMES, Clock.systemUTC());
  }
}
