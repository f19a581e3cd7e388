package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Watches an evacuation from outside and records what the invariants need: for each VMI, the state
 * of its guest node when its deletion was first seen (read fresh from the guest API), how often it
 * was deleted, every drain start time it ever carried; for each protected guest workload, the
 * fewest available pods it ever had; for each tenant, the most of its control-plane guest nodes
 * that were down at once.
 *
 * <p>A control-plane guest node (label {@code node-role.kubernetes.io/control-plane}) is
 * <em>down</em> while it is cordoned ({@code spec.unschedulable}: being drained, or not yet
 * uncordoned after its VMI came back) or its Ready condition is not True (its VM is being
 * recreated: {@link GuestReboots}). The stricter of the two readings of "not available to the
 * tenant's quorum".
 */
public final class InvariantRecorder implements AutoCloseable {
  public static final String DRAIN_START_ANNOTATION = "capk.cluster.x-k8s.io/vmi-drain-start-time";
  public static final String CONTROL_PLANE_NODE_LABEL = "node-role.kubernetes.io/control-plane";

  /** The guest node as read right after its VMI's deletion was seen. */
  public record DrainCheck(boolean nodeFound, boolean cordoned, List<String> remainingPods) {
    public boolean drained() {
      return !nodeFound || (cordoned && remainingPods.isEmpty());
    }
  }

  private final Map<String, TenantCluster> tenantByNamespace = new ConcurrentHashMap<>();
  private final Map<String, DrainCheck> drainCheckByUid = new ConcurrentHashMap<>();
  private final Map<String, String> uidToVmi = new ConcurrentHashMap<>();
  private final Map<String, Integer> deletionsByUid = new ConcurrentHashMap<>();
  private final Map<String, String> lastUidByVmi = new ConcurrentHashMap<>();
  private final Map<String, Set<String>> drainStartsByVmi = new ConcurrentHashMap<>();
  private final Map<String, Integer> minAvailable = new ConcurrentHashMap<>();
  private final Map<String, Long> cordonSeenAt = new ConcurrentHashMap<>();
  private final Map<String, Long> vmiDeletionSeenAt = new ConcurrentHashMap<>();
  private final Map<String, ControlPlaneNodes> controlPlaneByTenant = new ConcurrentHashMap<>();
  private final List<SharedInformerFactory> factories = new ArrayList<>();
  private final ExecutorService checks = Executors.newFixedThreadPool(4);
  private volatile boolean trackingAvailability;

  public InvariantRecorder(KubeCluster infra, List<TenantCluster> tenants) {
    for (TenantCluster t : tenants) {
      tenantByNamespace.put(t.namespace(), t);
      watchGuest(t);
    }
    watchVmis(infra);
    factories.forEach(SharedInformerFactory::startAllRegisteredInformers);
  }

  private void watchVmis(KubeCluster infra) {
    var client = infra.informerClient();
    SharedInformerFactory factory = new SharedInformerFactory(client);
    DynamicKubernetesApi api =
        new DynamicKubernetesApi("kubevirt.io", "v1", "virtualmachineinstances", client);
    SharedIndexInformer<DynamicKubernetesObject> informer =
        factory.sharedIndexInformerFor(
            (GenericKubernetesApi<
                    DynamicKubernetesObject,
                    io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject>)
                api,
            DynamicKubernetesObject.class,
            0);
    informer.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(DynamicKubernetesObject vmi) {
            seen(vmi, false);
          }

          @Override
          public void onUpdate(DynamicKubernetesObject old, DynamicKubernetesObject vmi) {
            seen(vmi, false);
          }

          @Override
          public void onDelete(DynamicKubernetesObject vmi, boolean unknownFinalState) {
            seen(vmi, true);
          }
        });
    factories.add(factory);
  }

  private void seen(DynamicKubernetesObject vmi, boolean deleted) {
    String key = vmi.getMetadata().getNamespace() + "/" + vmi.getMetadata().getName();
    String uid = vmi.getMetadata().getUid();
    uidToVmi.put(uid, key);
    Map<String, String> annotations = vmi.getMetadata().getAnnotations();
    if (annotations != null && annotations.get(DRAIN_START_ANNOTATION) != null) {
      drainStartsByVmi
          .computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet())
          .add(annotations.get(DRAIN_START_ANNOTATION));
    }
    if (deleted) {
      deletionsByUid.merge(uid, 1, Integer::sum);
    } else {
      // After a relist the informer reports a VMI recreated under the same name as an update, not
      // as a delete and an add: a new UID under a known name is the old one's deletion.
      String previous = lastUidByVmi.put(key, uid);
      if (previous != null && !previous.equals(uid) && !deletionsByUid.containsKey(previous)) {
        deletionsByUid.merge(previous, 1, Integer::sum);
        deletionObserved(previous, vmi);
      }
    }
    if (deleted || vmi.getMetadata().getDeletionTimestamp() != null) {
      deletionObserved(uid, vmi);
    }
  }

  private void deletionObserved(String uid, DynamicKubernetesObject vmi) {
    if (vmiDeletionSeenAt.putIfAbsent(uid, System.nanoTime()) == null) {
      TenantCluster tenant = tenantByNamespace.get(vmi.getMetadata().getNamespace());
      if (tenant != null) {
        checks.submit(
            () -> drainCheckByUid.put(uid, readGuestNode(tenant, vmi.getMetadata().getName())));
      }
    }
  }

  private static DrainCheck readGuestNode(TenantCluster tenant, String nodeName) {
    try {
      CoreV1Api core = new CoreV1Api(tenant.guest().client());
      V1Node node;
      try {
        node = core.readNode(nodeName).execute();
      } catch (io.kubernetes.client.openapi.ApiException e) {
        if (e.getCode() == 404) {
          return new DrainCheck(false, false, List.of());
        }
        throw e;
      }
      List<String> remaining =
          core
              .listPodForAllNamespaces()
              .fieldSelector("spec.nodeName=" + nodeName)
              .execute()
              .getItems()
              .stream()
              .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
              .filter(p -> !ownedByDaemonSet(p))
              .filter(
                  p ->
                      !"Succeeded".equals(p.getStatus().getPhase())
                          && !"Failed".equals(p.getStatus().getPhase()))
              .map(p -> p.getMetadata().getNamespace() + "/" + p.getMetadata().getName())
              .toList();
      return new DrainCheck(
          true, Boolean.TRUE.equals(node.getSpec().getUnschedulable()), remaining);
    } catch (Exception e) {
      return new DrainCheck(true, false, List.of("(guest read failed: " + e + ")"));
    }
  }

  private static boolean ownedByDaemonSet(V1Pod p) {
    return p.getMetadata().getOwnerReferences() != null
        && p.getMetadata().getOwnerReferences().stream()
            .anyMatch(o -> "DaemonSet".equals(o.getKind()));
  }

  private void watchGuest(TenantCluster tenant) {
    var client = tenant.guest().informerClient();
    SharedInformerFactory factory = new SharedInformerFactory(client);
    CoreV1Api core = new CoreV1Api(client);
    SharedIndexInformer<V1Pod> pods =
        factory.sharedIndexInformerFor(
            params ->
                core.listPodForAllNamespaces()
                    .resourceVersion(params.resourceVersion)
                    .watch(params.watch)
                    .timeoutSeconds(params.timeoutSeconds)
                    .buildCall(null),
            V1Pod.class,
            V1PodList.class);
    pods.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(V1Pod p) {
            recount(tenant, pods);
          }

          @Override
          public void onUpdate(V1Pod o, V1Pod p) {
            recount(tenant, pods);
          }

          @Override
          public void onDelete(V1Pod p, boolean unknown) {
            recount(tenant, pods);
          }
        });
    SharedIndexInformer<V1Node> nodes =
        factory.sharedIndexInformerFor(
            params ->
                core.listNode()
                    .resourceVersion(params.resourceVersion)
                    .watch(params.watch)
                    .timeoutSeconds(params.timeoutSeconds)
                    .buildCall(null),
            V1Node.class,
            V1NodeList.class);
    nodes.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(V1Node n) {
            node(tenant, n);
          }

          @Override
          public void onUpdate(V1Node o, V1Node n) {
            node(tenant, n);
          }

          @Override
          public void onDelete(V1Node n, boolean unknown) {
            controlPlane(tenant).gone(n.getMetadata().getName());
          }
        });
    factories.add(factory);
  }

  private void node(TenantCluster tenant, V1Node n) {
    boolean cordoned = Boolean.TRUE.equals(n.getSpec().getUnschedulable());
    if (cordoned) {
      cordonSeenAt.putIfAbsent(
          tenant.namespace() + "/" + n.getMetadata().getName(), System.nanoTime());
    }
    Map<String, String> labels = n.getMetadata().getLabels();
    // Tenants may share a guest cluster: each counts only the nodes labelled as its own.
    if (trackingAvailability
        && labels != null
        && tenant.name().equals(labels.get(TenantCluster.TENANT_LABEL))
        && labels.containsKey(CONTROL_PLANE_NODE_LABEL)) {
      controlPlane(tenant).seen(n.getMetadata().getName(), cordoned || !ready(n));
    }
  }

  private ControlPlaneNodes controlPlane(TenantCluster tenant) {
    return controlPlaneByTenant.computeIfAbsent(tenant.name(), k -> new ControlPlaneNodes());
  }

  private static boolean ready(V1Node n) {
    if (n.getStatus() == null || n.getStatus().getConditions() == null) {
      return false;
    }
    return n.getStatus().getConditions().stream()
        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** One tenant's control-plane guest nodes: which are down now, the most at once, the history. */
  private static final class ControlPlaneNodes {
    private final java.util.TreeSet<String> down = new java.util.TreeSet<>();
    private final java.util.TreeSet<String> everDown = new java.util.TreeSet<>();
    private final List<String> history = new ArrayList<>();
    private int maxDown;

    synchronized void seen(String node, boolean isDown) {
      boolean changed = isDown ? down.add(node) : down.remove(node);
      if (isDown) {
        everDown.add(node);
      }
      if (changed) {
        maxDown = Math.max(maxDown, down.size());
        history.add(java.time.Instant.now() + " down=" + down);
      }
    }

    synchronized void gone(String node) {
      if (down.remove(node)) {
        history.add(java.time.Instant.now() + " down=" + down + " (" + node + " deleted)");
      }
    }
  }

  /** Counts available (Running, not terminating) pods per app label; keeps each app's minimum. */
  private void recount(TenantCluster tenant, SharedIndexInformer<V1Pod> pods) {
    // During the initial list pods arrive one by one: counting then would record false minima.
    if (!trackingAvailability || !pods.hasSynced()) {
      return;
    }
    Map<String, Integer> counts = new java.util.HashMap<>();
    for (V1Pod p : pods.getIndexer().list()) {
      String app =
          p.getMetadata().getLabels() == null ? null : p.getMetadata().getLabels().get("app");
      if (app == null) {
        continue;
      }
      String key = tenant.name() + ":" + p.getMetadata().getNamespace() + "/" + app;
      boolean available =
          p.getMetadata().getDeletionTimestamp() == null
              && p.getStatus() != null
              && "Running".equals(p.getStatus().getPhase());
      counts.merge(key, available ? 1 : 0, Integer::sum);
    }
    counts.forEach((k, v) -> minAvailable.merge(k, v, Math::min));
  }

  /**
   * From now on, track the fewest available pods of each workload (call once the workloads are up).
   */
  public void startTrackingAvailability() {
    trackingAvailability = true;
  }

  /**
   * The fewest available pods {@code app} in guest namespace {@code ns} of {@code tenant} ever had.
   */
  public int minAvailable(TenantCluster tenant, String ns, String app) {
    return Objects.requireNonNullElse(minAvailable.get(tenant.name() + ":" + ns + "/" + app), -1);
  }

  public Map<String, Integer> minAvailableByWorkload() {
    return Map.copyOf(minAvailable);
  }

  /**
   * The most control-plane guest nodes of {@code tenant} that were down (cordoned or not Ready) at
   * the same time, since tracking started.
   */
  public int maxControlPlaneNodesDown(TenantCluster tenant) {
    ControlPlaneNodes c = controlPlane(tenant);
    synchronized (c) {
      return c.maxDown;
    }
  }

  /** The control-plane guest nodes of {@code tenant} that were down at some time. */
  public Set<String> controlPlaneNodesEverDown(TenantCluster tenant) {
    ControlPlaneNodes c = controlPlane(tenant);
    synchronized (c) {
      return Set.copyOf(c.everDown);
    }
  }

  /** Each change of the set of {@code tenant}'s control-plane guest nodes down, with its time. */
  public String controlPlaneHistory(TenantCluster tenant) {
    ControlPlaneNodes c = controlPlane(tenant);
    synchronized (c) {
      return String.join("\n", c.history);
    }
  }

  /**
   * The guest node's state right after the deletion of VMI {@code uid} was first seen; null if not
   * seen yet.
   */
  public DrainCheck drainCheck(String uid) {
    return drainCheckByUid.get(uid);
  }

  /**
   * How many times VMI {@code uid} was seen deleted (a DELETED event, or its name taken by a new
   * UID).
   */
  public int deletions(String uid) {
    return deletionsByUid.getOrDefault(uid, 0);
  }

  /** Every distinct drain start time VMI {@code namespace/name} ever carried (across its UIDs). */
  public Set<String> drainStarts(String namespace, String name) {
    return Set.copyOf(drainStartsByVmi.getOrDefault(namespace + "/" + name, Set.of()));
  }

  /** Whether the guest node was seen cordoned before the VMI's deletion was seen. */
  public boolean cordonSeenBeforeDeletion(TenantCluster tenant, String vmiName, String uid) {
    Long cordon = cordonSeenAt.get(tenant.namespace() + "/" + vmiName);
    Long deletion = vmiDeletionSeenAt.get(uid);
    return cordon != null && deletion != null && cordon < deletion;
  }

  @Override
  public void close() {
    factories.forEach(SharedInformerFactory::stopAllRegisteredInformers);
    checks.shutdownNow();
    try {
      checks.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
