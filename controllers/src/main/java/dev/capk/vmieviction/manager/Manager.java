package dev.capk.vmieviction.manager;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventWriters;
import dev.capk.vmieviction.eviction.ApiInfraVmis;
import dev.capk.vmieviction.eviction.ApiLiveMigrations;
import dev.capk.vmieviction.eviction.ApiManagementObjects;
import dev.capk.vmieviction.eviction.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionMetrics;
import dev.capk.vmieviction.eviction.EvictionSettings;
import dev.capk.vmieviction.eviction.GuestClusters;
import dev.capk.vmieviction.eviction.KubeVirtClusterDefaults;
import dev.capk.vmieviction.eviction.LiveMigrationPolicy;
import dev.capk.vmieviction.eviction.SeriesVmiEvents;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler;
import dev.capk.vmieviction.kube.CipherOrder;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.maintenance.NodeMaintenanceController;
import dev.capk.vmieviction.maintenance.NodeMaintenanceSettings;
import dev.capk.vmieviction.runtime.ControllerRuntime;
import dev.capk.vmieviction.runtime.ManagedController;
import dev.capk.vmieviction.runtime.TwoLaneWorkQueue;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.TenantThrottle;
import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.extended.controller.ControllerWatch;
import io.kubernetes.client.extended.controller.builder.ControllerBuilder;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.kubernetes.client.extended.leaderelection.LeaderElectionRecord;
import io.kubernetes.client.extended.leaderelection.LeaderElector;
import io.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import io.prometheus.client.CollectorRegistry;
import java.io.IOException;
import java.io.Reader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires the process: infra clients, the VMI eviction controller (informers, rate-limited work
 * queue, workers, reconciler, events) and, with --enable-node-maintenance, the NodeMaintenance
 * controller, both run by one {@link ControllerRuntime} under one leader election; metrics and
 * probes. {@link #start()} returns at once; {@link #awaitTermination()} blocks until the
 * controllers stop (shutdown or lost lease).
 */
public final class Manager implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Manager.class);

  static final String CONTROLLER_NAME = "vmi-eviction";
  static final Duration RESYNC = Duration.ofMinutes(10);
  static final Duration REQUEST_READ_TIMEOUT = Duration.ofSeconds(15);
  static final Duration REQUEST_CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private final ManagerOptions options;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final AtomicBoolean closing = new AtomicBoolean();
  private ControllerRuntime runtime;
  private volatile String identity;
  private volatile ManagementInformers management;
  private volatile ExternalInfraController external;
  private HttpEndpoints metricsEndpoint;
  private HttpEndpoints probesEndpoint;

  public Manager(ManagerOptions options) {
    this.options = options;
  }

  public Manager start() throws IOException {
    LenientJson.install();
    ApiClient watchClient = PipelineParts.forWatches(infraClient(options.kubeconfig));
    ApiClient requestClient = PipelineParts.forRequests(infraClient(options.kubeconfig));

    // Own registry: several managers can live in one JVM (tests); the framework's controller
    // metrics register in the default registry, so /metrics serves both.
    CollectorRegistry registry = new CollectorRegistry(true);
    EvictionMetrics metrics = new EvictionMetrics(registry);

    if (options.externalInfra()) {
      return startExternal(watchClient, requestClient, registry, metrics);
    }
    return startInCluster(watchClient, requestClient, registry, metrics);
  }

  /** The VMIs run in the cluster of --kubeconfig: one pipeline watches them. */
  private Manager startInCluster(
      ApiClient watchClient,
      ApiClient requestClient,
      CollectorRegistry registry,
      EvictionMetrics metrics)
      throws IOException {
    VmiInformers informers =
        new VmiInformers(
            watchClient,
            PipelineParts.vmiApi(watchClient),
            options.namespaces,
            options.vmiLabelSelector,
            RESYNC);

    // Written off the workers' threads: a step does not wait for its events.
    EventWriters eventWriters = new EventWriters("vmi-events", 4, 10_000);
    closeables.add(eventWriters);
    EventSeriesRecorder vmiEvents =
        PipelineParts.events(requestClient, SeriesVmiEvents.OUTCOMES, eventWriters);

    // Clusters, Machines and KubevirtMachines, read at every evacuation step, from caches.
    ManagementInformers management =
        new ManagementInformers(watchClient, options.clusterApiVersion, options.namespaces);
    this.management = management;

    GuestClients guestClients = guestClients(requestClient, management, registry);
    EvictionSettings settings = evictionSettings();
    // Per-item exponential backoff for unexpected reconcile failures (the framework's default
    // limiter); the reconciler's own requeues use addAfter with delays capped at the deadline.
    // Two lanes: a VMI whose guest node's pods left goes ahead of retries of blocked drains.
    TwoLaneWorkQueue<Request> queue = new TwoLaneWorkQueue<>("vmi-workqueue");
    VmiEvictionReconciler reconciler =
        reconciler(
            new InClusterPipeline(requestClient, informers, management, queue),
            guestClients,
            vmiEvents,
            metrics,
            settings);
    Controller workers = workers(informers, management, reconciler, queue);

    List<ManagedController> controllers =
        controllers(informers, management, workers, requestClient, watchClient);
    run(controllers, requestClient, registry, queue::length);
    log.info(
        "manager started namespaces={} selector=\"{}\" drainTimeout={} retryInterval={} attemptTimeout={} workers={} defaultStrategy={}",
        options.namespaces.isEmpty() ? "all" : options.namespaces,
        options.vmiLabelSelector,
        GoDuration.format(options.drainTimeout),
        GoDuration.format(options.drainRetryInterval),
        GoDuration.format(options.drainAttemptTimeout),
        options.workers,
        options.defaultEvictionStrategy);
    return this;
  }

  /** The VMI workers and, with --enable-node-maintenance, the NodeMaintenance controller. */
  private List<ManagedController> controllers(
      VmiInformers informers,
      ManagementInformers management,
      Controller workers,
      ApiClient requestClient,
      ApiClient watchClient) {
    List<SharedInformerFactory> factories = new ArrayList<>(informers.factories());
    factories.addAll(management.factories());
    List<ManagedController> controllers = new ArrayList<>();
    // Readiness waits for the VMI caches only: the management caches may never sync (RBAC without
    // list/watch on them) and reads they cannot answer go to the API (see ManagementInformers).
    controllers.add(
        ManagedController.of(CONTROLLER_NAME, factories, informers::hasSynced, workers));
    // --enable-node-maintenance: NodeMaintenance runs beside the VMI workers, under the same lease.
    if (options.enableNodeMaintenance) {
      controllers.add(nodeMaintenance(requestClient, watchClient));
    }

    return controllers;
  }

  /** The in-cluster pipeline's infra side: its client, caches and work queue. */
  private record InClusterPipeline(
      ApiClient requestClient,
      VmiInformers informers,
      ManagementInformers management,
      TwoLaneWorkQueue<Request> queue) {}

  private VmiEvictionReconciler reconciler(
      InClusterPipeline p,
      GuestClients guestClients,
      EventSeriesRecorder vmiEvents,
      EvictionMetrics metrics,
      EvictionSettings settings) {
    // The guest nodes' Events, off the workers' threads.
    EventWriters guestEventWriters = new EventWriters("guest-node-events", 4, 10_000);
    closeables.add(guestEventWriters);
    // Pods leaving a guest node being drained wake that VMI's next step at once.
    GuestClusters guests =
        new GuestClusters(
            guestClients,
            options.clusterNamespacePolicy(),
            guestEventWriters,
            key -> p.queue().addFirst(PipelineParts.request(key)),
            options.drainRetryInterval);
    closeables.add(guests);
    return new VmiEvictionReconciler(
        new ApiInfraVmis(
            p.informers()::get, p.informers()::ofCluster, PipelineParts.vmiApi(p.requestClient())),
        new KubeVirtClusterDefaults(
            PipelineParts.kubevirtApi(p.requestClient()), Duration.ofMinutes(1), Clock.systemUTC()),
        guests,
        new ApiManagementObjects(
            p.requestClient(),
            options.clusterApiVersion,
            options.clusterNamespacePolicy(),
            p.management().all()),
        new ApiLiveMigrations(p.requestClient()),
        new SeriesVmiEvents(vmiEvents),
        metrics,
        settings,
        Clock.systemUTC(),
        // A VMI held by the admit step, woken when what holds it ends.
        key -> p.queue().add(PipelineParts.request(key)),
        // In-cluster infra: every VMI the informer selects is ours.
        vmi -> Optional.empty());
  }

  /** The VMI workers, fed by the VMI informers' events and by rotated kubeconfig Secrets. */
  private Controller workers(
      VmiInformers informers,
      ManagementInformers management,
      VmiEvictionReconciler reconciler,
      TwoLaneWorkQueue<Request> queue) {
    ControllerWatch<VirtualMachineInstance> watch =
        ControllerBuilder.controllerWatchBuilder(VirtualMachineInstance.class, queue)
            .withResyncPeriod(RESYNC)
            .build();
    // Registered here rather than with ControllerBuilder.watch(): that only sees one factory's
    // informer, and there is one factory per watched namespace.
    // Each event records when a VMI's mark was first seen before it reaches the queue: a drain
    // starts then, not when a worker gets to the VMI.
    informers.addEventHandler(
        reconciler.markSightings().before(watch.getResourceEventHandler()), RESYNC);
    // A rotated kubeconfig Secret: the tenant's VMIs take their next step now, with a client built
    // from the new kubeconfig (GuestClients compares the cached Secret's version at every call).
    management.onKubeconfigChanged(
        (ns, cluster) ->
            informers
                .ofCluster(ns, cluster)
                .forEach(vmi -> queue.add(new Request(ns, vmi.getMetadata().getName()))));
    return ControllerBuilder.defaultBuilder(informers.anyFactory())
        .withName(CONTROLLER_NAME)
        .withWorkQueue(queue)
        .withReconciler(reconciler)
        .withWorkerCount(options.workers)
        .withReadyFunc(informers::hasSynced)
        .withReadyTimeout(Duration.ofMinutes(5))
        .build();
  }

  private NodeMaintenanceController nodeMaintenance(
      ApiClient requestClient, ApiClient watchClient) {
    return new NodeMaintenanceController(
        requestClient,
        watchClient,
        NodeMaintenanceSettings.defaults()
            .withTaints(
                NodeMaintenanceSettings.taints(
                    options.nodeMaintenanceDrainTaint, options.nodeMaintenanceKubevirtDrainTaint)));
  }

  /**
   * Leader election (in the cluster of --kubeconfig), the runtime, metrics and probes; starts the
   * controllers.
   */
  private void run(
      List<ManagedController> controllers,
      ApiClient requestClient,
      CollectorRegistry registry,
      java.util.function.IntSupplier queueLength)
      throws IOException {
    LeaderElector elector = null;
    if (options.leaderElect) {
      String namespace = leaderElectionNamespace();
      identity = newIdentity();
      LeaseLock lock = new LeaseLock(namespace, options.leaderElectionId, identity, requestClient);
      elector =
          new LeaderElector(
              new LeaderElectionConfig(
                  lock, options.leaseDuration, options.renewDeadline, options.retryPeriod));
      // Where the client falls short: LeaderElector never releases its lease, so a standby would
      // wait a whole lease duration after a clean shutdown. Release it, as controller-runtime's
      // LeaderElectionReleaseOnCancel does (after the runtime closed the elector).
      closeables.add(() -> releaseLease(lock, identity));
      log.info(
          "leader election enabled lease={}/{} identity={}",
          namespace,
          options.leaderElectionId,
          identity);
    }
    // Reconciles in flight get one drain pass plus guest call timeouts to finish at shutdown.
    runtime =
        new ControllerRuntime(controllers, elector, options.drainAttemptTimeout.plusSeconds(15));
    ManagerMetrics.register(registry, runtime::ready, queueLength::getAsInt);

    if (!BindAddress.disabled(options.metricsBindAddress)) {
      metricsEndpoint =
          HttpEndpoints.metrics(
              BindAddress.parse(options.metricsBindAddress),
              List.of(CollectorRegistry.defaultRegistry, registry));
    }
    if (!BindAddress.disabled(options.healthProbeBindAddress)) {
      probesEndpoint =
          HttpEndpoints.probes(BindAddress.parse(options.healthProbeBindAddress), runtime::ready);
    }

    runtime.start();
  }

  /**
   * --infra-clusters=external: the cluster of --kubeconfig is the management cluster; the VMIs run
   * in the infra clusters KubevirtClusters name, each watched by a pipeline of its own ({@link
   * ExternalInfraController}).
   */
  private Manager startExternal(
      ApiClient watchClient,
      ApiClient requestClient,
      CollectorRegistry registry,
      EvictionMetrics metrics)
      throws IOException {
    ManagementInformers management =
        new ManagementInformers(watchClient, options.clusterApiVersion, options.namespaces);
    this.management = management;
    GuestClients guestClients = guestClients(requestClient, management, registry);
    EventWriters guestEventWriters = new EventWriters("guest-node-events", 4, 10_000);
    closeables.add(guestEventWriters);
    // Events in the management cluster: on KubevirtMachines (evacuation outcomes) and on
    // KubevirtClusters (infra Secret and connection problems).
    EventWriters managementEventWriters = new EventWriters("management-events", 2, 10_000);
    closeables.add(managementEventWriters);
    EventSeriesRecorder managementEvents =
        PipelineParts.events(
            requestClient,
            dev.capk.vmieviction.eviction.ManagementMirroredVmiEvents.MIRRORED,
            managementEventWriters);
    ExternalInfraController external =
        new ExternalInfraController(
            options,
            watchClient,
            requestClient,
            management,
            new InfraPipeline.Shared(
                options,
                requestClient,
                management,
                guestClients,
                guestEventWriters,
                managementEvents,
                metrics,
                evictionSettings()));
    this.external = external;
    List<ManagedController> controllers = new ArrayList<>(List.of(external));
    run(controllers, requestClient, registry, external::queueLength);
    log.info(
        "manager started infraClusters=external managementNamespaces={} selector=\"{}\" drainTimeout={} workersPerInfraNamespace={}",
        options.namespaces.isEmpty() ? "all" : options.namespaces,
        options.vmiLabelSelector,
        GoDuration.format(options.drainTimeout),
        options.workers);
    return this;
  }

  private EvictionSettings evictionSettings() {
    EvictionSettings settings =
        new EvictionSettings(
            options.drainTimeout,
            options.drainRetryInterval,
            options.drainAttemptTimeout,
            options.defaultEvictionStrategy,
            min(Duration.ofMinutes(1), options.drainTimeout),
            EvacuationLimit.parse(options.maxConcurrentEvacuationsPerCluster).orElseThrow(),
            options.drainReserve,
            LiveMigrationPolicy.parse(options.liveMigration).orElseThrow(),
            options.migrationAttempts);
    if (options.drainReserve.compareTo(options.drainTimeout) >= 0) {
      log.warn(
          "--drain-reserve {} is not shorter than --drain-timeout {}: a VMI held by the quorum"
              + " guard or the per-cluster limit goes ahead at once (with its Overridden event);"
              + " the guard only orders evacuations",
          GoDuration.format(options.drainReserve),
          GoDuration.format(options.drainTimeout));
    }
    return settings;
  }

  /**
   * The tenants' guest clients, built from the kubeconfig Secrets the management caches hold, and
   * the janitor that drops the ones left unused; both closed with the manager.
   */
  private GuestClients guestClients(
      ApiClient requestClient, ManagementInformers management, CollectorRegistry registry) {
    GuestClients guestClients =
        new GuestClients(
            requestClient,
            options.clusterApiVersion,
            management.clusters(),
            management.kubeconfigSecrets(),
            GuestClients.Settings.defaults()
                .withFlags(
                    options.guestClientIdleTimeout,
                    options.allowInsecureGuestTls,
                    new TenantThrottle.Limits(
                        options.guestQps, options.guestBurst, options.guestMaxInFlight)),
            registry);
    closeables.add(guestClients);
    ScheduledExecutorService janitor =
        Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder()
                .setNameFormat("guest-client-janitor")
                .setDaemon(true)
                .build());
    janitor.scheduleWithFixedDelay(guestClients::cleanUp, 1, 1, TimeUnit.MINUTES);
    closeables.add(janitor::shutdownNow);
    return guestClients;
  }

  /** Blocks until the controller stops; true when it stopped because the lease was lost. */
  public boolean awaitTermination() throws InterruptedException {
    if (runtime == null) {
      throw new IllegalStateException("manager not started");
    }
    return runtime.awaitTermination();
  }

  /** The bound metrics address, when serving (port 0 in tests picks a free one). */
  public java.net.InetSocketAddress metricsAddress() {
    return metricsEndpoint == null ? null : metricsEndpoint.address();
  }

  public java.net.InetSocketAddress probesAddress() {
    return probesEndpoint == null ? null : probesEndpoint.address();
  }

  /** This replica's leader election identity (null without --leader-elect). */
  public String identity() {
    return identity;
  }

  /**
   * The Cluster, Machine and KubevirtMachine caches have synced, so reads they answer cost no
   * request. Never true when the RBAC lacks list/watch on them (reads then go to the API); not part
   * of {@link #ready()}.
   */
  public boolean managementCachesSynced() {
    ManagementInformers m = management;
    return m != null && m.hasSynced();
  }

  public boolean ready() {
    return runtime != null && runtime.ready();
  }

  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    log.info("manager stopping");
    if (runtime != null) {
      runtime.close();
    }
    if (metricsEndpoint != null) {
      metricsEndpoint.close();
    }
    if (probesEndpoint != null) {
      probesEndpoint.close();
    }
    for (AutoCloseable c : closeables) {
      try {
        c.close();
      } catch (Exception e) {
        log.debug("close failed", e);
      }
    }
  }

  /** --kubeconfig, else in-cluster, else $KUBECONFIG / ~/.kube/config. */
  static ApiClient infraClient(Path kubeconfig) throws IOException {
    return CipherOrder.preferChaCha20(configuredClient(kubeconfig));
  }

  private static ApiClient configuredClient(Path kubeconfig) throws IOException {
    if (kubeconfig != null) {
      try (Reader r = Files.newBufferedReader(kubeconfig, StandardCharsets.UTF_8)) {
        KubeConfig kc = KubeConfig.loadKubeConfig(r);
        kc.setFile(kubeconfig.toAbsolutePath().toFile());
        return ClientBuilder.kubeconfig(kc).build();
      }
    }
    if (System.getenv("KUBERNETES_SERVICE_HOST") != null) {
      return ClientBuilder.cluster().build();
    }
    return ClientBuilder.standard().build();
  }

  private static void releaseLease(LeaseLock lock, String identity) {
    try {
      LeaderElectionRecord record = lock.get();
      if (record.getHolderIdentity() == null) {
        log.debug("lease already free lease={}", lock.describe());
        return;
      }
      if (!identity.equals(record.getHolderIdentity())) {
        log.info(
            "lease held by another replica, left alone lease={} holder={}",
            lock.describe(),
            record.getHolderIdentity());
        return;
      }
      // No holder: client-go and client-java electors both take the lease at once.
      record.setHolderIdentity(null);
      record.setLeaseDurationSeconds(1);
      record.setRenewTime(new java.util.Date());
      if (lock.update(record)) {
        log.info("lease released lease={}", lock.describe());
      }
    } catch (Exception e) {
      log.info(
          "lease not released lease={} error={}", lock.describe(), e.getClass().getSimpleName());
    }
  }

  private String leaderElectionNamespace() {
    if (options.leaderElectionNamespace != null && !options.leaderElectionNamespace.isBlank()) {
      return options.leaderElectionNamespace;
    }
    Path podNamespace = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
    try {
      if (Files.isReadable(podNamespace)) {
        return Files.readString(podNamespace, StandardCharsets.UTF_8).trim();
      }
    } catch (IOException e) {
      log.debug("pod namespace not readable", e);
    }
    return "kube-system";
  }

  private static String newIdentity() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "unknown";
    }
    return host + "_" + UUID.randomUUID();
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
