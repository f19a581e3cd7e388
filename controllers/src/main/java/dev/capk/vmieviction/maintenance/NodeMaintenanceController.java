package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceList;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.SteppedDrains;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.kube.WatchListApi;
import dev.capk.vmieviction.logging.InformerFailures;
import dev.capk.vmieviction.runtime.ControllerRuntime;
import dev.capk.vmieviction.runtime.ManagedController;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.extended.controller.builder.ControllerBuilder;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.workqueue.DefaultRateLimitingQueue;
import io.kubernetes.client.extended.workqueue.RateLimitingQueue;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NodeMaintenance controller's parts, for {@link ControllerRuntime}: informers on
 * NodeMaintenances and on Nodes (a node that goes, comes back or is uncordoned behind our back), a
 * work queue and workers, and the drains under way by maintenance name: a watch on the node's pods
 * that wakes the next step, and the drain's memory between steps.
 */
public final class NodeMaintenanceController
    implements ManagedController, NodeMaintenanceReconciler.DrainSteps {
  private static final Logger log = LoggerFactory.getLogger(NodeMaintenanceController.class);

  public static final String NAME = "node-maintenance";
  static final String BY_NODE = "nodeName";

  private final NodeMaintenanceSettings settings;
  private final SharedInformerFactory factory;
  private final SharedIndexInformer<NodeMaintenance> maintenances;
  private final SharedIndexInformer<V1Node> nodes;
  private final RateLimitingQueue<Request> queue =
      new DefaultRateLimitingQueue<>(
          Executors.newSingleThreadExecutor(
              Thread.ofPlatform().name("node-maintenance-queue").daemon().factory()));
  private final Controller workers;
  private final ApiClient requestClient;
  private final SteppedDrains drains;

  /** A node that appears, goes, or changes its spec or our mark: look at its maintenances again. */
  private final ResourceEventHandler<V1Node> nodeEvents =
      new ResourceEventHandler<>() {
        @Override
        public void onAdd(V1Node n) {
          enqueueFor(n);
        }

        @Override
        public void onUpdate(V1Node o, V1Node n) {
          String mark = NodeMaintenanceApi.NODE_STATE_ANNOTATION;
          if (!Objects.equals(o.getSpec(), n.getSpec())
              || !Objects.equals(
                  LenientJson.annotation(o, mark), LenientJson.annotation(n, mark))) {
            enqueueFor(n);
          }
        }

        @Override
        public void onDelete(V1Node n, boolean finalStateUnknown) {
          enqueueFor(n);
        }
      };

  /** {@code watchClient}, for the informers, must have no read timeout. */
  public NodeMaintenanceController(
      ApiClient requestClient, ApiClient watchClient, NodeMaintenanceSettings settings) {
    this.settings = settings;
    this.requestClient = requestClient;
    this.drains =
        new SteppedDrains(
            "node-maintenance-eviction-", settings.retryInterval(), settings.maxRetryInterval());
    this.factory = new SharedInformerFactory(watchClient);
    this.maintenances =
        informer(
            factory,
            new WatchListApi<>(
                NodeMaintenance.class,
                NodeMaintenanceList.class,
                NodeMaintenanceApi.GROUP,
                NodeMaintenanceApi.VERSION,
                NodeMaintenanceApi.PLURAL,
                watchClient),
            NodeMaintenance.class,
            settings.resync().toMillis());
    maintenances.addIndexers(
        Map.of(BY_NODE, nm -> List.of(nm.nodeName() == null ? "" : nm.nodeName())));
    // No resync for nodes: the maintenances' resync already looks at every maintained node.
    this.nodes =
        informer(
            factory,
            new WatchListApi<>(V1Node.class, V1NodeList.class, "", "v1", "nodes", watchClient),
            V1Node.class,
            0);
    // Decisions read nodes live: the cache keeps no status (most of a Node's size).
    nodes.setTransform(n -> n instanceof V1Node node ? node.status(null) : n);
    LenientJson.install(); // no field a newer API server adds to Node may fail the watch
    var recorder =
        new EventSeriesRecorder(
            EventStore.of(new CoreV1Api(requestClient)),
            "node-maintenance-controller",
            MaintenanceEvents.OUTCOMES,
            Clock.systemUTC(),
            null,
            0);
    NodeMaintenanceReconciler reconciler =
        new NodeMaintenanceReconciler(
            new Lister<>(maintenances.getIndexer())::get,
            new MaintenanceCluster(requestClient),
            this,
            (ref, warning, reason, message) -> recorder.record(ref, "", warning, reason, message),
            settings,
            Clock.systemUTC());
    nodes.addEventHandler(nodeEvents);
    this.workers =
        ControllerBuilder.defaultBuilder(factory)
            .withName(NAME)
            .withWorkQueue(queue)
            .watch(
                q ->
                    ControllerBuilder.controllerWatchBuilder(NodeMaintenance.class, q)
                        .withWorkQueueKeyFunc(nm -> new Request(nm.getMetadata().getName()))
                        // Our own status writes must not wake us (each would start a drain step).
                        .withOnUpdateFilter(NodeMaintenanceController::worthReconciling)
                        .withResyncPeriod(settings.resync())
                        .build())
            .withReconciler(reconciler)
            .withWorkerCount(settings.workers())
            .withReadyFunc(this::hasSynced)
            .withReadyTimeout(Duration.ofMinutes(5))
            .build();
  }

  /** An informer on every object of {@code api}, its failed lists backed off and counted. */
  private static <T extends KubernetesObject> SharedIndexInformer<T> informer(
      SharedInformerFactory factory, WatchListApi<T, ?> api, Class<T> type, long resync) {
    String kind = type == V1Node.class ? "Node" : type.getSimpleName();
    InformerFailures failures = new InformerFailures("kind=" + kind + " namespace=all", null);
    var lists = failures.lists(api, "", new ListOptions(), UnaryOperator.identity());
    return factory.sharedIndexInformerFor(lists, type, resync, failures.handler());
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<SharedInformerFactory> informerFactories() {
    return List.of(factory);
  }

  @Override
  public boolean hasSynced() {
    return maintenances.hasSynced() && nodes.hasSynced();
  }

  @Override
  public Controller workers() {
    return workers;
  }

  @Override
  public void start() {
    log.info(
        "node maintenance controller started taints={} passTimeout={} retryInterval={}"
            + " maxRetryInterval={} workers={}",
        settings.taints(),
        settings.passTimeout(),
        settings.retryInterval(),
        settings.maxRetryInterval(),
        settings.workers());
  }

  /** No watch on a maintained node outlives the lease that allowed its drain. */
  @Override
  public void stopping() {
    log.info("node maintenance controller stopping");
    List.copyOf(drains.keys()).forEach(this::end);
  }

  @Override
  public void close() {
    drains.close();
  }

  @Override
  public DrainStep step(String name, String node, DrainOptions options)
      throws ApiException, DrainRefusedException {
    // Pods leaving the node wake its next step (a burst of them, one step).
    SteppedDrains.Pods on =
        drains.pods(
            name,
            requestClient,
            node,
            (key, n) -> queue.addAfter(new Request(name), settings.progressInterval()),
            () ->
                SteppedDrains.listPods(
                    new RawApi(requestClient), node, "", DrainOptions.DEFAULT_CHUNK_SIZE));
    return drains.step(
        requestClient, node, on.pods(), options, on.drain().memory(), BudgetWatch.NONE);
  }

  @Override
  public void end(String name) {
    drains
        .end(name)
        .ifPresent(
            d -> log.debug("node pod watch closed nodeMaintenance={} node={}", name, d.node()));
  }

  /**
   * An update worth a reconcile: a resync (same version), a spec change (the generation), deletion
   * starting, or a finalizer change. Not a status-only change: those are our own writes.
   */
  static boolean worthReconciling(NodeMaintenance oldNm, NodeMaintenance newNm) {
    var o = oldNm.getMetadata();
    var n = newNm.getMetadata();
    return Objects.equals(o.getResourceVersion(), n.getResourceVersion())
        || !Objects.equals(o.getGeneration(), n.getGeneration())
        || !Objects.equals(o.getDeletionTimestamp(), n.getDeletionTimestamp())
        || !Objects.equals(o.getFinalizers(), n.getFinalizers());
  }

  private void enqueueFor(V1Node node) {
    if (node != null && node.getMetadata() != null && node.getMetadata().getName() != null) {
      maintenances
          .getIndexer()
          .byIndex(BY_NODE, node.getMetadata().getName())
          .forEach(nm -> queue.add(new Request(nm.getMetadata().getName())));
    }
  }
}
