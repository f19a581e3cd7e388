package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigrationList;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.eviction.ClusterDefaults;
import dev.capk.vmieviction.eviction.EvictionMetrics;
import dev.capk.vmieviction.eviction.EvictionSettings;
import dev.capk.vmieviction.eviction.GuestClusters;
import dev.capk.vmieviction.eviction.InfraVmis;
import dev.capk.vmieviction.eviction.MachineContractCheck;
import dev.capk.vmieviction.eviction.VmiEvents;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler;
import dev.capk.vmieviction.runtime.ManagedController;
import dev.capk.vmieviction.runtime.TwoLaneWorkQueue;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.extended.controller.ControllerWatch;
import io.kubernetes.client.extended.controller.builder.ControllerBuilder;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The eviction pipeline of the VMIs one infra connection shows in some namespaces: VMI informers, a
 * two-lane work queue, {@code --workers} workers and a reconciler whose VMI calls go to that infra
 * cluster, while the Cluster API objects and kubeconfig Secrets come from the cluster of
 * --kubeconfig. Local mode runs one, on that cluster; external mode one per (infra connection,
 * namespace), so an infra cluster that is down or slow holds only its own pipelines.
 */
final class InfraPipeline implements ManagedController {

  static final String CONTROLLER_NAME = "vmi-eviction";
  static final Duration RESYNC = Duration.ofMinutes(10);

  record Shared(
      ManagerOptions options,
      InfraConnection home,
      ManagementInformers management,
      GuestClients guestClients,
      EventSeriesRecorder guestNodeEvents,
      EvictionMetrics metrics,
      EvictionSettings settings) {}

  private final String name;
  private final ManagementInformers.Kind<VirtualMachineInstance> vmis;
  private final TwoLaneWorkQueue<Request> queue;
  private final GuestClusters guests;
  private final VmiEvictionReconciler reconciler;
  private final Controller workers;
  private final Runnable unsubscribe;

  /**
   * @param id "" for the one pipeline of local mode, else what tells this one's queue and workers
   *     apart (the infra namespace)
   * @param vmis its VMI informers ({@link #vmis}), started already or not
   * @param tenants which tenant a VMI seen here belongs to, if any
   * @param events what the VMI events (written on the VMI) also go to
   */
  InfraPipeline(
      String id,
      InfraConnection connection,
      ManagementInformers.Kind<VirtualMachineInstance> vmis,
      TenantMapping tenants,
      UnaryOperator<VmiEvents> events,
      Shared shared) {
    ManagerOptions options = shared.options();
    String suffix = id.isEmpty() ? "" : "-" + id;
    this.name = CONTROLLER_NAME + suffix;
    this.vmis = vmis;
    // Two lanes: a VMI whose guest node's pods left goes ahead of retries of blocked drains.
    this.queue = new TwoLaneWorkQueue<>("vmi-workqueue" + suffix);
    // Pods leaving a guest node being drained wake that VMI's next step at once.
    this.guests =
        new GuestClusters(
            shared.guestClients(),
            tenants,
            shared.guestNodeEvents(),
            key -> queue.addFirst(request(key)),
            options.drainRetryInterval);
    this.reconciler =
        new VmiEvictionReconciler(
            new InfraVmis(
                (ns, name) -> vmis.find(ns, name).orElse(null),
                (ns, cluster) ->
                    named(cluster).stream()
                        .filter(v -> ns.equals(v.getMetadata().getNamespace()))
                        .toList(),
                InfraVmis.api(connection.requestClient)),
            new ClusterDefaults(connection.requestClient, Duration.ofMinutes(1), Clock.systemUTC()),
            guests,
            new MachineContractCheck(
                shared.home().requestClient,
                options.clusterApiVersion,
                tenants,
                shared.management().all()),
            new GenericKubernetesApi<>(
                VirtualMachineInstanceMigration.class,
                VirtualMachineInstanceMigrationList.class,
                KubeVirtApi.GROUP,
                KubeVirtApi.VERSION,
                KubeVirtApi.MIGRATION_PLURAL,
                connection.requestClient),
            events.apply(VmiEvents.series(connection.vmiEvents)),
            shared.metrics(),
            shared.settings(),
            Clock.systemUTC(),
            // A VMI held by the admit step, woken when what holds it ends.
            key -> queue.add(request(key)),
            tenants::refusal);
    ControllerWatch<VirtualMachineInstance> watch =
        ControllerBuilder.controllerWatchBuilder(VirtualMachineInstance.class, queue)
            .withResyncPeriod(RESYNC)
            .build();
    // Not ControllerBuilder.watch(): that sees one factory's informer, and there is one factory per
    // namespace. Each event records when a VMI's mark was first seen before it reaches the queue: a
    // drain starts then, not when a worker gets to the VMI.
    vmis.addEventHandler(reconciler.markSightings(watch.getResourceEventHandler()), RESYNC);
    // Unexpected reconcile failures back off per item (the framework's limiter); the
    // reconciler's own requeues use addAfter, capped at the deadline.
    this.workers =
        ControllerBuilder.defaultBuilder(vmis.factories().get(0))
            .withName(name)
            .withWorkQueue(queue)
            .withReconciler(reconciler)
            .withWorkerCount(options.workers)
            .withReadyFunc(vmis::hasSynced)
            .withReadyTimeout(Duration.ofMinutes(5))
            .build();
    // A tenant's kubeconfig Secret changed: its VMIs take their next step now, with a new client.
    this.unsubscribe = shared.management().onKubeconfigChanged(tenant -> wake(tenant.name()));
  }

  /**
   * The VMI informers of a pipeline on {@code connection}: in {@code namespaces} (empty: all), by
   * --vmi-label-selector; {@code listFailed} is told of each failed list or watch (null: logged
   * with a count).
   */
  static ManagementInformers.Kind<VirtualMachineInstance> vmis(
      InfraConnection connection,
      List<String> namespaces,
      ManagerOptions options,
      Consumer<Throwable> listFailed) {
    return ManagementInformers.vmis(
        connection.watchClient, namespaces, options.vmiLabelSelector, RESYNC, listFailed);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public List<SharedInformerFactory> informerFactories() {
    return vmis.factories();
  }

  @Override
  public boolean hasSynced() {
    return vmis.hasSynced();
  }

  @Override
  public Controller workers() {
    return workers;
  }

  /** The VMIs labelled with this Cluster name, in any namespace, look again. */
  void wake(String cluster) {
    named(cluster)
        .forEach(
            v -> queue.add(new Request(v.getMetadata().getNamespace(), v.getMetadata().getName())));
  }

  private List<VirtualMachineInstance> named(String cluster) {
    return vmis.byIndex(ManagementInformers.CLUSTER_INDEX, cluster);
  }

  @Override
  public int queueLength() {
    return queue.length();
  }

  /** After the workers and informers stopped: the guests' watches, and the shared gauges. */
  @Override
  public void close() {
    unsubscribe.run();
    guests.close();
    reconciler.stopped();
  }

  private static Request request(String key) {
    int slash = key.indexOf('/');
    return new Request(key.substring(0, slash), key.substring(slash + 1));
  }
}
