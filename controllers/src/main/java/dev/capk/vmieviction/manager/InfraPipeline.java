package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventWriters;
import dev.capk.vmieviction.eviction.ApiInfraVmis;
import dev.capk.vmieviction.eviction.ApiLiveMigrations;
import dev.capk.vmieviction.eviction.ApiManagementObjects;
import dev.capk.vmieviction.eviction.EvictionMetrics;
import dev.capk.vmieviction.eviction.EvictionSettings;
import dev.capk.vmieviction.eviction.GuestClusters;
import dev.capk.vmieviction.eviction.KubeVirtClusterDefaults;
import dev.capk.vmieviction.eviction.ManagementMirroredVmiEvents;
import dev.capk.vmieviction.eviction.SeriesVmiEvents;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler;
import dev.capk.vmieviction.infra.BoundTenants;
import dev.capk.vmieviction.infra.InfraBindings;
import dev.capk.vmieviction.runtime.TwoLaneWorkQueue;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.GuestClusterRef;
import io.kubernetes.client.extended.controller.ControllerWatch;
import io.kubernetes.client.extended.controller.DefaultController;
import io.kubernetes.client.extended.controller.builder.ControllerBuilder;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole eviction pipeline of one external infra namespace, reached through one {@link
 * InfraConnection}: a label-selected VMI informer on that namespace, its own work queue and
 * workers, and a reconciler whose VMI reads and writes, VMI events, KubeVirt defaults and live
 * migrations go to that infra cluster, while Clusters, Machines, KubevirtMachines and kubeconfig
 * Secrets come from the management cluster, through the tenant mapping of the Clusters bound here
 * ({@link BoundTenants}). One infra cluster that is down or slow holds only its own pipelines.
 */
final class InfraPipeline implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(InfraPipeline.class);

  /** How often a pipeline whose informer has not listed yet looks again (asleep). */
  private static final Duration SYNC_CHECK = Duration.ofMillis(100);

  /** What every pipeline shares: the management side and the settings. */
  record Shared(
      ManagerOptions options,
      ApiClient managementRequests,
      ManagementInformers management,
      GuestClients guestClients,
      EventWriters guestEventWriters,
      EventSeriesRecorder managementEvents,
      EvictionMetrics metrics,
      EvictionSettings settings) {}

  final InfraBindings.Target target;
  final String name;
  private final BoundTenants tenants;
  private volatile List<V1ObjectReference> kubevirtClusters;
  private final VmiInformers informers;
  private final TwoLaneWorkQueue<Request> queue;
  private final GuestClusters guests;
  private final DefaultController workers;
  private final VmiEvictionReconciler reconciler;
  private volatile boolean stopped;
  private Thread runner;

  InfraPipeline(
      InfraBindings.Target target,
      InfraConnection connection,
      InfraBindings.Bound bound,
      List<V1ObjectReference> kubevirtClusters,
      Shared shared,
      Consumer<Throwable> listFailed) {
    this.target = target;
    this.name = connection.connection.displayName() + " namespace " + target.namespace();
    this.tenants = new BoundTenants(name, bound.clusters());
    this.kubevirtClusters = List.copyOf(kubevirtClusters);
    ManagerOptions options = shared.options();
    this.informers =
        new VmiInformers(
            connection.watchClient,
            PipelineParts.vmiApi(connection.watchClient),
            List.of(target.namespace()),
            options.vmiLabelSelector,
            Manager.RESYNC,
            listFailed);
    this.queue = new TwoLaneWorkQueue<>("vmi-workqueue-" + target.namespace());
    TwoLaneWorkQueue<Request> q = queue;
    this.guests =
        new GuestClusters(
            shared.guestClients(),
            tenants,
            shared.guestEventWriters(),
            key -> q.addFirst(PipelineParts.request(key)),
            options.drainRetryInterval);
    this.reconciler = reconciler(connection, shared);
    ControllerWatch<VirtualMachineInstance> watch =
        ControllerBuilder.controllerWatchBuilder(VirtualMachineInstance.class, queue)
            .withResyncPeriod(Manager.RESYNC)
            .build();
    // A drain starts when its mark was seen (see Manager).
    informers.addEventHandler(
        reconciler.markSightings().before(watch.getResourceEventHandler()), Manager.RESYNC);
    this.workers =
        (DefaultController)
            ControllerBuilder.defaultBuilder(informers.anyFactory())
                .withName(Manager.CONTROLLER_NAME + "-" + target.namespace())
                .withWorkQueue(queue)
                .withReconciler(reconciler)
                .withWorkerCount(options.workers)
                .withReadyFunc(informers::hasSynced)
                .withReadyTimeout(Duration.ofDays(365))
                .build();
  }

  /**
   * VMI reads and writes, VMI events, KubeVirt defaults and live migrations in the infra cluster;
   * the management objects of the Clusters bound here.
   */
  private VmiEvictionReconciler reconciler(InfraConnection connection, Shared shared) {
    TwoLaneWorkQueue<Request> q = queue;
    Supplier<List<V1ObjectReference>> kvcs = () -> this.kubevirtClusters;
    return new VmiEvictionReconciler(
        new ApiInfraVmis(
            informers::get, informers::ofCluster, PipelineParts.vmiApi(connection.requestClient)),
        new KubeVirtClusterDefaults(
            PipelineParts.kubevirtApi(connection.requestClient),
            Duration.ofMinutes(1),
            Clock.systemUTC()),
        guests,
        new ApiManagementObjects(
            shared.managementRequests(),
            shared.options().clusterApiVersion,
            tenants,
            shared.management().all()),
        new ApiLiveMigrations(connection.requestClient),
        new ManagementMirroredVmiEvents(
            new SeriesVmiEvents(connection.vmiEvents),
            shared.managementEvents(),
            tenants,
            kvcs,
            name),
        shared.metrics(),
        shared.settings(),
        Clock.systemUTC(),
        key -> q.add(PipelineParts.request(key)),
        tenants::refusal);
  }

  /** Starts the informer and, once it has listed, the workers. */
  synchronized void start() {
    informers.factories().forEach(SharedInformerFactory::startAllRegisteredInformers);
    runner =
        new Thread(
            () -> {
              // The client's DefaultController spins a core waiting for its caches: wait asleep
              // (an unreachable infra cluster may never let them list).
              while (!stopped && !informers.hasSynced()) {
                try {
                  Thread.sleep(SYNC_CHECK.toMillis());
                } catch (InterruptedException e) {
                  return;
                }
              }
              if (!stopped) {
                log.info("infra pipeline synced infra=\"{}\"", name);
                workers.run();
              }
            },
            "infra-pipeline-" + target.namespace());
    runner.setDaemon(true);
    runner.start();
    log.info("infra pipeline started infra=\"{}\" clusters={}", name, tenants.bound());
  }

  /** The Clusters and KubevirtClusters bound here changed. */
  void rebind(InfraBindings.Bound bound, List<V1ObjectReference> kubevirtClusters) {
    java.util.Set<GuestClusterRef> before = tenants.bound();
    if (!bound.clusters().equals(before)) {
      log.info("infra pipeline rebound infra=\"{}\" clusters={}", name, bound.clusters());
      tenants.rebind(bound.clusters());
      // The VMIs of Clusters bound or unbound look again: some are ours now, others no longer.
      java.util.Set<String> names = new java.util.HashSet<>();
      before.forEach(c -> names.add(c.name()));
      bound.clusters().forEach(c -> names.add(c.name()));
      names.forEach(
          n ->
              informers
                  .ofCluster(target.namespace(), n)
                  .forEach(v -> queue.add(PipelineParts.request(key(v)))));
    }
    this.kubevirtClusters = List.copyOf(kubevirtClusters);
  }

  List<V1ObjectReference> kubevirtClusters() {
    return kubevirtClusters;
  }

  /** A tenant's kubeconfig Secret changed: its VMIs here take their next step now. */
  void kubeconfigChanged(String namespace, String cluster) {
    GuestClusterRef ref = new GuestClusterRef(namespace, cluster);
    if (!tenants.bound().contains(ref)) {
      return;
    }
    informers
        .ofCluster(target.namespace(), cluster)
        .forEach(v -> queue.add(PipelineParts.request(key(v))));
  }

  private static String key(VirtualMachineInstance v) {
    return v.getMetadata().getNamespace() + "/" + v.getMetadata().getName();
  }

  int queueLength() {
    return queue.length();
  }

  /** Stops the workers (waiting a bounded time for reconciles in flight), then the informer. */
  @Override
  public synchronized void close() {
    if (stopped) {
      return;
    }
    stopped = true;
    workers.shutdown();
    if (workers.getWorkerThreadPool() != null) {
      try {
        workers.getWorkerThreadPool().awaitTermination(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    informers.factories().forEach(f -> f.stopAllRegisteredInformers(true));
    guests.close();
    reconciler.stopped();
    if (runner != null) {
      runner.interrupt();
    }
    log.info("infra pipeline stopped infra=\"{}\"", name);
  }
}
