package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.kubevirt.EvictionStrategy;
import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.TenantMapping;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The manager's flags, named as in controller-runtime managers where one exists. */
@Command(
    name = "vmi-eviction-controller",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Drains the guest node inside each KubeVirt VMI (eviction strategy External) that KubeVirt marks"
          + " for evacuation, then deletes the VMI, within a global deadline.",
      "With no command the controller runs; the same jar has these commands too (each with"
          + " its own --help):"
    },
    footer = {
      "Commands:",
      "  drain NODE... | -l SELECTOR [flags]  as kubectl drain, faster",
      "  cordon NODE... | -l SELECTOR         as kubectl cordon",
      "  uncordon NODE... | -l SELECTOR       as kubectl uncordon",
      "  status [-o wide|json]                the evacuations in progress"
    },
    versionProvider = ManagerOptions.JarVersion.class)
public final class ManagerOptions {

  @Option(
      names = "--kubeconfig",
      paramLabel = "FILE",
      description =
          "Infra cluster kubeconfig (with --infra-clusters=external: the management cluster's);"
              + " default: in-cluster config (else $KUBECONFIG, ~/.kube/config).")
  Path kubeconfig;

  static final String INFRA_LOCAL = "local";
  static final String INFRA_EXTERNAL = "external";

  @Option(
      names = "--infra-clusters",
      paramLabel = "local|external",
      defaultValue = INFRA_LOCAL,
      description =
          "local: the VMIs run in the cluster of --kubeconfig. external: --kubeconfig is the"
              + " management cluster (Clusters, Machines, KubevirtMachines, KubevirtClusters,"
              + " kubeconfig Secrets, the Lease); the VMIs run in the infra clusters named by each"
              + " KubevirtCluster's spec.infraClusterSecretRef, watched in the infra namespace its"
              + " Secret names (key namespace, else the KubevirtCluster's); --namespace then"
              + " restricts the management namespaces (default: ${DEFAULT-VALUE}).")
  String infraClusters;

  @Option(names = "--leader-elect", description = "Elect a leader with a Lease before reconciling.")
  boolean leaderElect;

  @Option(
      names = "--shard-infra-clusters",
      description =
          "With --infra-clusters=external: instead of one leader, every replica runs and serves"
              + " the infra clusters it holds, one Lease per infra cluster"
              + " (<--leader-election-id>-shard-<key>, in the leader-election namespace), shared"
              + " out evenly across the live replicas (each renews a Lease"
              + " <--leader-election-id>-member-<digest>); a replica that stops renewing loses its"
              + " infra clusters to the others after the lease duration. The"
              + " --leader-election-* durations apply to each Lease; --leader-elect is not needed.")
  boolean shardInfraClusters;

  @Option(
      names = "--leader-election-namespace",
      paramLabel = "NS",
      description = "Namespace of the Lease; default: the pod's namespace, else kube-system.")
  String leaderElectionNamespace;

  @Option(
      names = "--leader-election-id",
      paramLabel = "NAME",
      defaultValue = "capk-vmi-eviction-controller",
      description = "Name of the Lease (default: ${DEFAULT-VALUE}).")
  String leaderElectionId;

  @Option(
      names = "--leader-election-lease-duration",
      paramLabel = "DURATION",
      defaultValue = "15s",
      description = "Lease duration (default: ${DEFAULT-VALUE}).")
  Duration leaseDuration;

  @Option(
      names = "--leader-election-renew-deadline",
      paramLabel = "DURATION",
      defaultValue = "10s",
      description = "Renew deadline (default: ${DEFAULT-VALUE}).")
  Duration renewDeadline;

  @Option(
      names = "--leader-election-retry-period",
      paramLabel = "DURATION",
      defaultValue = "2s",
      description = "Retry period (default: ${DEFAULT-VALUE}).")
  Duration retryPeriod;

  @Option(
      names = "--metrics-bind-address",
      paramLabel = "ADDR",
      defaultValue = ":8080",
      description = "Prometheus metrics at /metrics; \"0\" disables (default: ${DEFAULT-VALUE}).")
  String metricsBindAddress;

  @Option(
      names = "--health-probe-bind-address",
      paramLabel = "ADDR",
      defaultValue = ":8081",
      description = "/healthz and /readyz; \"0\" disables (default: ${DEFAULT-VALUE}).")
  String healthProbeBindAddress;

  @Option(
      names = "--drain-timeout",
      paramLabel = "DURATION",
      defaultValue = "10m",
      description = "Global deadline from drain start to VMI deletion (default: ${DEFAULT-VALUE}).")
  Duration drainTimeout;

  @Option(
      names = "--drain-retry-interval",
      paramLabel = "DURATION",
      defaultValue = "20s",
      description =
          "Longest wait before a refused guest pod eviction is tried again (the first retry comes"
              + " after 5s, then 10s, ... up to this), and between two looks at a drain that only"
              + " waits for pods to terminate (a watch on the guest node's pods wakes it sooner)"
              + " (default: ${DEFAULT-VALUE}).")
  Duration drainRetryInterval;

  @Option(
      names = "--drain-attempt-timeout",
      paramLabel = "DURATION",
      defaultValue = "20s",
      description =
          "Longest a guest pod eviction request may take (cut to what is left before the"
              + " deadline) (default: ${DEFAULT-VALUE}).")
  Duration drainAttemptTimeout;

  @Option(
      names = "--max-concurrent-evacuations-per-cluster",
      paramLabel = "N|P%",
      defaultValue = "0",
      description =
          "Worker VMIs of one tenant Cluster evacuated at once: a count (0 = unlimited) or a"
              + " percentage of the Cluster's VMIs (at least 1); a Cluster's annotation"
              + " capk.cluster.x-k8s.io/max-concurrent-evacuations overrides it"
              + " (default: ${DEFAULT-VALUE}).")
  String maxConcurrentEvacuationsPerCluster;

  @Option(
      names = "--drain-reserve",
      paramLabel = "DURATION",
      defaultValue = "3m",
      description =
          "A VMI held by the quorum guard or the per-cluster limit goes ahead no later than its"
              + " deadline minus this (default: ${DEFAULT-VALUE}).")
  Duration drainReserve;

  @Option(
      names = "--live-migration",
      paramLabel = "never|prefer",
      defaultValue = "never",
      description =
          "prefer: move a LiveMigratable External VMI with a VirtualMachineInstanceMigration"
              + " instead of draining its guest node, falling back to the drain when it is not"
              + " migratable, fails or is not done by the deadline minus --drain-reserve; a"
              + " Cluster's annotation capk.cluster.x-k8s.io/live-migration overrides it"
              + " (default: ${DEFAULT-VALUE}).")
  String liveMigration;

  @Option(
      names = "--migration-attempts",
      paramLabel = "N",
      defaultValue = "2",
      description =
          "Live migrations tried per evacuation before falling back to the drain"
              + " (default: ${DEFAULT-VALUE}).")
  int migrationAttempts;

  // A reconcile advances one drain by one step and returns: workers are busy for a guest round
  // trip, not for a drain, so a few serve hundreds of drains in progress.
  @Option(
      names = "--workers",
      paramLabel = "N",
      defaultValue = "16",
      description = "Concurrent reconciles (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(
      names = "--guest-qps",
      paramLabel = "QPS",
      defaultValue = "50",
      description =
          "Requests per second to one guest cluster, on average (kubectl's default)"
              + " (default: ${DEFAULT-VALUE}).")
  double guestQps;

  @Option(
      names = "--guest-burst",
      paramLabel = "N",
      defaultValue = "300",
      description =
          "Requests to one guest cluster above --guest-qps in a burst (kubectl's default)"
              + " (default: ${DEFAULT-VALUE}).")
  int guestBurst;

  @Option(
      names = "--guest-max-in-flight",
      paramLabel = "N",
      defaultValue = "4",
      description =
          "Reconcile steps talking to one guest cluster at once: the most workers a slow or"
              + " stalled tenant API server can hold (default: ${DEFAULT-VALUE}).")
  int guestMaxInFlight;

  @Option(
      names = "--namespace",
      paramLabel = "NS",
      description = "Watch VMIs in this namespace; repeatable; default: all namespaces.")
  List<String> namespaces = new ArrayList<>();

  @Option(
      names = "--vmi-label-selector",
      paramLabel = "SELECTOR",
      defaultValue = CapkLabels.DEFAULT_VMI_SELECTOR,
      description = "Server-side label selector of the VMIs to watch (default: ${DEFAULT-VALUE}).")
  String vmiLabelSelector;

  @Option(
      names = "--default-eviction-strategy",
      paramLabel = "STRATEGY",
      defaultValue = EvictionStrategy.NONE,
      description =
          "Strategy assumed when neither the VMI nor the KubeVirt CR sets one (default: ${DEFAULT-VALUE}).")
  String defaultEvictionStrategy;

  @Option(
      names = "--cluster-api-version",
      paramLabel = "VERSION",
      defaultValue = "",
      description =
          "Version of cluster.x-k8s.io to read, v1beta2 or v1beta1 (default: v1beta2 if the"
              + " server serves it, else v1beta1).")
  String clusterApiVersion;

  @Option(
      names = "--guest-client-idle-timeout",
      paramLabel = "DURATION",
      defaultValue = "15m",
      description = "Drop a guest cluster client unused this long (default: ${DEFAULT-VALUE}).")
  Duration guestClientIdleTimeout;

  @Option(
      names = "--allow-cross-namespace-clusters",
      description =
          "Let a VMI name its Cluster (and kubeconfig Secret) in another namespace through the label"
              + " capk.cluster.x-k8s.io/kubevirt-machine-namespace. Off: a VMI's Cluster is read from the VMI's own"
              + " namespace only, so a VMI cannot reach another tenant's credentials.")
  boolean allowCrossNamespaceClusters;

  @Option(
      names = "--cross-namespace-cluster",
      paramLabel = "VMI_NS=CLUSTER_NS",
      description =
          "Let VMIs in VMI_NS name Clusters in CLUSTER_NS (repeatable); narrower than"
              + " --allow-cross-namespace-clusters.")
  List<String> crossNamespaceClusters = new ArrayList<>();

  @Option(
      names = "--allow-insecure-guest-tls",
      description =
          "Accept guest kubeconfigs that relax TLS (insecure-skip-tls-verify: true, tls-server-name,"
              + " proxy-url). Off by default: such a kubeconfig is refused with the event KubeconfigInvalid, since"
              + " whoever sits between the controller and the guest API server would get the tenant's credentials.")
  boolean allowInsecureGuestTls;

  @Option(
      names = "--enable-node-maintenance",
      description =
          "Also serve NodeMaintenance objects (nodemaintenance.medik8s.io/v1beta1, as the Node Maintenance"
              + " Operator): taint, cordon and drain nodes declaratively.")
  boolean enableNodeMaintenance;

  @Option(
      names = "--node-maintenance-drain-taint",
      paramLabel = "KEY[=VALUE]:EFFECT",
      defaultValue = "medik8s.io/drain:NoSchedule",
      description =
          "Taint of nodes in maintenance, besides node.kubernetes.io/unschedulable (default: ${DEFAULT-VALUE}).")
  String nodeMaintenanceDrainTaint;

  @Option(
      names = "--node-maintenance-kubevirt-drain-taint",
      description =
          "Also taint nodes in maintenance kubevirt.io/drain:NoSchedule, as older KubeVirt releases expect.")
  boolean nodeMaintenanceKubevirtDrainTaint;

  /** The problems picocli cannot see. */
  List<String> validate() {
    List<String> problems = new ArrayList<>();
    BiConsumer<Boolean, String> require =
        (ok, problem) -> {
          if (!ok) {
            problems.add(problem);
          }
        };
    positive(require, "--drain-timeout", drainTimeout);
    positive(require, "--drain-retry-interval", drainRetryInterval);
    positive(require, "--drain-attempt-timeout", drainAttemptTimeout);
    positive(require, "--guest-client-idle-timeout", guestClientIdleTimeout);
    require.accept(
        EvacuationLimit.parse(maxConcurrentEvacuationsPerCluster).isPresent(),
        "--max-concurrent-evacuations-per-cluster must be a count (0 = unlimited) or a percentage"
            + " from 1% to 100%, got \""
            + maxConcurrentEvacuationsPerCluster
            + "\"");
    require.accept(
        !drainReserve.isNegative(),
        "--drain-reserve must not be negative, got " + GoDuration.format(drainReserve));
    require.accept(
        INFRA_LOCAL.equals(infraClusters) || externalInfra(),
        "--infra-clusters must be local or external, got \"" + infraClusters + "\"");
    require.accept(
        !(externalInfra() && enableNodeMaintenance),
        "--enable-node-maintenance serves the Nodes of the --kubeconfig cluster, which with"
            + " --infra-clusters=external is the management cluster: not supported together");
    require.accept(
        !shardInfraClusters || externalInfra(),
        "--shard-infra-clusters shares out infra clusters: it needs --infra-clusters=external");
    require.accept(
        !shardInfraClusters
            || (leaderElectionId.length() <= 63
                && leaderElectionId.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?")),
        "with --shard-infra-clusters, --leader-election-id names Leases and labels them: at most 63"
            + " lower-case letters, digits and '-', got \""
            + leaderElectionId
            + "\"");
    require.accept(
        List.of("", ClusterApi.V1BETA2, ClusterApi.V1BETA1).contains(clusterApiVersion),
        "--cluster-api-version must be v1beta2 or v1beta1, got \"" + clusterApiVersion + "\"");
    require.accept(
        LiveMigrationPolicy.parse(liveMigration).isPresent(),
        "--live-migration must be never or prefer, got \"" + liveMigration + "\"");
    atLeastOne(require, "--migration-attempts", migrationAttempts);
    atLeastOne(require, "--workers", workers);
    require.accept(
        List.of(
                EvictionStrategy.NONE,
                EvictionStrategy.LIVE_MIGRATE,
                EvictionStrategy.LIVE_MIGRATE_IF_POSSIBLE,
                EvictionStrategy.EXTERNAL)
            .contains(defaultEvictionStrategy),
        "--default-eviction-strategy must be one of None, LiveMigrate, LiveMigrateIfPossible,"
            + " External; got \"%s\"".formatted(defaultEvictionStrategy));
    require.accept(
        renewDeadline.compareTo(leaseDuration) < 0,
        "--leader-election-renew-deadline must be shorter than --leader-election-lease-duration");
    require.accept(guestQps > 0, "--guest-qps must be positive, got " + guestQps);
    atLeastOne(require, "--guest-burst", guestBurst);
    atLeastOne(require, "--guest-max-in-flight", guestMaxInFlight);
    require.accept(namespaces.stream().noneMatch(String::isBlank), "--namespace must not be empty");
    try {
      clusterNamespacePolicy();
    } catch (IllegalArgumentException e) {
      problems.add("--cross-namespace-cluster: " + e.getMessage());
    }
    HttpEndpoints.problem("--metrics-bind-address", metricsBindAddress).ifPresent(problems::add);
    HttpEndpoints.problem("--health-probe-bind-address", healthProbeBindAddress)
        .ifPresent(problems::add);
    dev.capk.vmieviction.maintenance.NodeMaintenanceSettings.taintProblem(
            "--node-maintenance-drain-taint", nodeMaintenanceDrainTaint)
        .ifPresent(problems::add);
    return problems;
  }

  private static void atLeastOne(BiConsumer<Boolean, String> require, String flag, int n) {
    require.accept(n >= 1, flag + " must be at least 1, got " + n);
  }

  private static void positive(BiConsumer<Boolean, String> require, String flag, Duration d) {
    require.accept(
        d.compareTo(Duration.ZERO) > 0, flag + " must be positive, got " + GoDuration.format(d));
  }

  /** Durations in Go's syntax ({@code 1h30m}, {@code 500ms}) or ISO-8601's ({@code PT10M}). */
  static CommandLine commandLine(ManagerOptions options) {
    return new CommandLine(options).registerConverter(Duration.class, GoDuration::parseOrIso);
  }

  boolean externalInfra() {
    return INFRA_EXTERNAL.equals(infraClusters);
  }

  TenantMapping clusterNamespacePolicy() {
    return TenantMapping.local(allowCrossNamespaceClusters, crossNamespaceClusters);
  }

  /** The manifest's {@code Implementation-Version}. */
  static final class JarVersion implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = ManagerOptions.class.getPackage().getImplementationVersion();
      return new String[] {
        "vmi-eviction-controller "
            + (v == null ? "(version unknown: not run from the built jar)" : v)
      };
    }
  }
}
