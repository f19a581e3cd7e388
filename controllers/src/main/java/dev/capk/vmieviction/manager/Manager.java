package dev.capk.vmieviction.manager;

import com.google.common.collect.Lists;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.eviction.EvictionMetrics;
import dev.capk.vmieviction.eviction.EvictionSettings;
import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import dev.capk.vmieviction.eviction.GuestClusters;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.maintenance.NodeMaintenanceController;
import dev.capk.vmieviction.maintenance.NodeMaintenanceSettings;
import dev.capk.vmieviction.runtime.ControllerRuntime;
import dev.capk.vmieviction.runtime.ManagedController;
import dev.capk.vmieviction.shards.ShardLeases;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestClient;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.ManagementApis;
import io.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.kubernetes.client.extended.leaderelection.LeaderElectionRecord;
import io.kubernetes.client.extended.leaderelection.LeaderElector;
import io.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.Namespaces;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the process from its flags: what every pipeline shares, and the controllers under one
 * {@link ControllerRuntime} and leader election (the {@link InfraPipeline} on the cluster of
 * --kubeconfig and the NodeMaintenance controller if enabled, or the {@link
 * ExternalInfraController}); metrics and probes.
 */
public final class Manager implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Manager.class);

  private final ManagerOptions options;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private boolean closed;
  private ControllerRuntime runtime;
  private volatile String identity;
  private volatile ManagementInformers management;
  private HttpEndpoints metricsEndpoint;
  private HttpEndpoints probesEndpoint;

  public Manager(ManagerOptions options) {
    this.options = options;
  }

  public Manager start() throws IOException {
    LenientJson.install();
    InfraConnection home = InfraConnection.local(options.kubeconfig);
    closeables.add(home);
    // Local mode: the VMIs' first list, most of a start among thousands of VMIs, runs from here on,
    // beside the discovery and the rest of the set-up; the runtime finds it started.
    ManagementInformers.Kind<VirtualMachineInstance> localVmis = null;
    if (!options.externalInfra()) {
      localVmis = InfraPipeline.vmis(home, options.namespaces, options, null);
      localVmis.factories().forEach(SharedInformerFactory::startAllRegisteredInformers);
      List<SharedInformerFactory> started = localVmis.factories();
      closeables.add(() -> started.forEach(f -> f.stopAllRegisteredInformers(true)));
    }
    options.clusterApiVersion = clusterApiVersion(home.requestClient);
    // Own registry: several managers can live in one JVM (tests).
    PrometheusRegistry registry = new PrometheusRegistry();
    management =
        new ManagementInformers(
            home.watchClient,
            options.clusterApiVersion,
            options.namespaces,
            options.externalInfra());
    // Outside the runtime: not part of readiness (RBAC without list/watch: they never sync).
    management.start();
    closeables.add(management::stop);
    // Written off the workers' threads: a step does not wait for them.
    EventSeriesRecorder guestNodeEvents = GuestClusters.nodeEvents(4);
    closeables.add(guestNodeEvents);
    InfraPipeline.Shared shared =
        new InfraPipeline.Shared(
            options,
            home,
            management,
            guestClients(home.requestClient, management, registry),
            guestNodeEvents,
            new EvictionMetrics(registry),
            evictionSettings());
    List<ManagedController> controllers = new ArrayList<>();
    controllers.add(
        options.externalInfra()
            ? new ExternalInfraController(shared, shards(registry))
            : new InfraPipeline(
                "",
                home,
                localVmis,
                options.clusterNamespacePolicy(),
                UnaryOperator.identity(),
                shared));
    if (options.enableNodeMaintenance) {
      controllers.add(
          new NodeMaintenanceController(
              home.requestClient,
              home.watchClient,
              NodeMaintenanceSettings.defaults(
                  NodeMaintenanceSettings.taints(
                      options.nodeMaintenanceDrainTaint,
                      options.nodeMaintenanceKubevirtDrainTaint))));
    }
    run(controllers, home.requestClient, registry);
    log.info(
        "manager started clusterApi={} infraClusters={} namespaces={} selector=\"{}\" drainTimeout={} retryInterval={} attemptTimeout={} workers={} defaultStrategy={}",
        options.clusterApiVersion,
        options.infraClusters,
        options.namespaces.isEmpty() ? "all" : options.namespaces,
        options.vmiLabelSelector,
        GoDuration.format(options.drainTimeout),
        GoDuration.format(options.drainRetryInterval),
        GoDuration.format(options.drainAttemptTimeout),
        options.workers,
        options.defaultEvictionStrategy);
    return this;
  }

  /**
   * With --shard-infra-clusters: the Leases that share infra clusters out, the leader election
   * flags' namespace, name and durations; null without.
   */
  private ExternalInfraController.Sharding shards(PrometheusRegistry registry) {
    if (!options.shardInfraClusters) {
      return null;
    }
    identity = newIdentity();
    return new ExternalInfraController.Sharding(
        new ShardLeases.Settings(
            leaderElectionNamespace(),
            options.leaderElectionId,
            identity,
            options.leaseDuration,
            options.renewDeadline,
            options.retryPeriod),
        registry);
  }

  private void run(
      List<ManagedController> controllers, ApiClient requestClient, PrometheusRegistry registry)
      throws IOException {
    LeaderElector elector = null;
    if (options.leaderElect && options.shardInfraClusters) {
      log.info("--leader-elect has no effect with --shard-infra-clusters: no replica leads");
    } else if (options.leaderElect) {
      String namespace = leaderElectionNamespace();
      identity = newIdentity();
      LeaseLock lock = new LeaseLock(namespace, options.leaderElectionId, identity, requestClient);
      elector =
          new LeaderElector(
              new LeaderElectionConfig(
                  lock, options.leaseDuration, options.renewDeadline, options.retryPeriod));
      // LeaderElector never releases its lease: a standby would wait a lease duration after a
      // clean shutdown. Released as controller-runtime's LeaderElectionReleaseOnCancel does.
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
    closeables.add(runtime);
    metricsEndpoint =
        HttpEndpoints.metrics(
            options.metricsBindAddress,
            registry,
            runtime::ready,
            () -> controllers.stream().mapToInt(ManagedController::queueLength).sum());
    probesEndpoint = HttpEndpoints.probes(options.healthProbeBindAddress, runtime::ready);
    Stream.of(metricsEndpoint, probesEndpoint).filter(Objects::nonNull).forEach(closeables::add);
    runtime.start();
  }

  private EvictionSettings evictionSettings() {
    EvictionSettings settings =
        new EvictionSettings(
            options.drainTimeout,
            options.drainRetryInterval,
            options.drainAttemptTimeout,
            options.defaultEvictionStrategy,
            Collections.min(List.of(Duration.ofMinutes(1), options.drainTimeout)),
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

  /** The flag's version, else the one discovery finds (else the start fails). */
  private String clusterApiVersion(ApiClient client) throws IOException {
    try {
      return ManagementApis.clusterApiVersion(client, options.clusterApiVersion, 6);
    } catch (ApiException e) {
      throw new IOException(
          "cannot discover which versions of cluster.x-k8s.io the API server serves: "
              + RawApi.describe(e),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted discovering cluster.x-k8s.io's versions");
    }
  }

  /** The guest clients, and the janitor that drops unused ones. */
  private GuestClients guestClients(
      ApiClient requestClient, ManagementInformers management, PrometheusRegistry registry) {
    GuestClients guestClients =
        new GuestClients(
            requestClient,
            options.clusterApiVersion,
            management.clusters(),
            management.kubeconfigSecrets(),
            new GuestClients.Settings(
                options.guestClientIdleTimeout,
                options.allowInsecureGuestTls,
                new GuestClient.Throttle.Limits(
                    options.guestQps, options.guestBurst, options.guestMaxInFlight)),
            registry);
    closeables.add(guestClients);
    ScheduledExecutorService janitor =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("guest-client-janitor").daemon().factory());
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

  public java.net.InetSocketAddress metricsAddress() {
    return metricsEndpoint == null ? null : metricsEndpoint.address();
  }

  public java.net.InetSocketAddress probesAddress() {
    return probesEndpoint == null ? null : probesEndpoint.address();
  }

  /** This replica's leader election or shard identity (null without either). */
  public String identity() {
    return identity;
  }

  /** Not part of ready: never, without RBAC list/watch. */
  public boolean managementCachesSynced() {
    ManagementInformers m = management;
    return m != null && m.hasSynced();
  }

  public boolean ready() {
    return runtime != null && runtime.ready();
  }

  /**
   * Closes once; a second caller (signal, shutdown hook, main) waits for the first one's close, so
   * the process never exits in the middle of giving the lease up.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    log.info("manager stopping");
    // Last opened, first closed: the runtime before what its controllers use.
    for (AutoCloseable c : Lists.reverse(closeables)) {
      try {
        c.close();
      } catch (Exception e) {
        log.debug("close failed", e);
      }
    }
  }

  private static void releaseLease(LeaseLock lock, String identity) {
    try {
      LeaderElectionRecord record = lock.get();
      if (!identity.equals(record.getHolderIdentity())) {
        return; // free already, or another replica's
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

  /** --leader-election-namespace, else the pod's namespace, else kube-system. */
  private String leaderElectionNamespace() {
    if (options.leaderElectionNamespace != null && !options.leaderElectionNamespace.isBlank()) {
      return options.leaderElectionNamespace;
    }
    try {
      return Namespaces.getPodNamespace().trim();
    } catch (IOException e) {
      return Namespaces.NAMESPACE_KUBESYSTEM;
    }
  }

  private static String newIdentity() {
    try {
      return InetAddress.getLocalHost().getHostName() + "_" + UUID.randomUUID();
    } catch (IOException e) {
      return "unknown_" + UUID.randomUUID();
    }
  }
}
