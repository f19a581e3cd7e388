package dev.capk.vmieviction.e2e.integration.eviction;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubeconfigs;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.util.PatchUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the eviction ITs do to the clusters: CAPK-shaped objects in the infra cluster (Cluster,
 * kubeconfig Secret, VMIs whose status KubeVirt would write), workloads and nodes in guest
 * clusters, and the controller's identity: the ServiceAccount and RBAC of {@code config/rbac}.
 */
final class EvictionFixture {
  private EvictionFixture() {}

  static final String CONTROLLER_NAMESPACE = "capk-vmi-eviction-system";
  static final String CONTROLLER_SA = "capk-vmi-eviction-controller";
  static final Duration WAIT = Duration.ofSeconds(90);

  // -----------------------------------------------------------------------------------------------
  // The controller's identity, exactly as config/ defines it.

  /**
   * Applies {@code config/rbac} (through a kustomize overlay that sets the namespace and prefix the
   * way {@code config/default} does) and returns a kubeconfig file holding a token of its
   * ServiceAccount: the controller runs with nothing but that RBAC.
   */
  static Path controllerKubeconfig(LocalCluster infra, Path dir) throws Exception {
    return controllerKubeconfig(infra, dir, infra.serverUrl(), infra.caCertificatePem());
  }

  /** As above, for reaching the API server at {@code server} (a proxy) that {@code caPem} signs. */
  static Path controllerKubeconfig(LocalCluster infra, Path dir, String server, String caPem)
      throws Exception {
    infra
        .kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Namespace
        metadata: {name: %s}
        """
                .formatted(CONTROLLER_NAMESPACE));
    Path overlay = Files.createDirectories(dir.resolve("rbac-overlay"));
    Files.writeString(
        overlay.resolve("kustomization.yaml"),
        """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        namespace: %s
        namePrefix: capk-
        resources:
        - %s
        """
            .formatted(
                CONTROLLER_NAMESPACE,
                // kustomize takes bases by relative path only
                overlay
                    .toAbsolutePath()
                    .relativize(
                        RepoPaths.root().resolve("config/rbac").toAbsolutePath().normalize())));
    infra.kubectl().runOrFail(null, "apply", "-k", overlay.toString());
    AuthenticationV1TokenRequest request =
        new AuthenticationV1TokenRequest()
            .spec(new V1TokenRequestSpec().expirationSeconds(3600L).audiences(List.of()));
    AuthenticationV1TokenRequest issued =
        new CoreV1Api(infra.client())
            .createNamespacedServiceAccountToken(CONTROLLER_SA, CONTROLLER_NAMESPACE, request)
            .execute();
    Path kubeconfig = dir.resolve("controller.kubeconfig");
    Files.writeString(
        kubeconfig,
        Kubeconfigs.withToken(
            infra.name(), server, caPem, issued.getStatus().getToken(), "vmi-eviction-controller"));
    return kubeconfig;
  }

  // -----------------------------------------------------------------------------------------------
  // Infra: namespaces, Clusters, Secrets, VMIs.

  static void namespace(LocalCluster c, String name) {
    c.kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Namespace
        metadata: {name: %s}
        """
                .formatted(name));
  }

  /** Namespace {@code name}, once its default ServiceAccount exists (pods may be created). */
  static void namespaceWithServiceAccount(LocalCluster c, String name) {
    namespace(c, name);
    CoreV1Api core = new CoreV1Api(c.client());
    Await.until(
        "the default ServiceAccount of " + name,
        WAIT,
        () -> {
          core.readNamespacedServiceAccount("default", name).execute();
          return true;
        });
  }

  static void cluster(LocalCluster infra, String ns, String name) {
    infra
        .kubectl()
        .apply(
            """
        apiVersion: cluster.x-k8s.io/v1beta1
        kind: Cluster
        metadata: {name: %s, namespace: %s}
        spec:
          infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: KubevirtCluster, name: %1$s}
        """
                .formatted(name, ns));
  }

  /** The Machine and its KubevirtMachine behind VMI {@code name}, as CAPI and CAPK create them. */
  static void machine(LocalCluster infra, String ns, String cluster, String name) {
    infra
        .kubectl()
        .apply(
            """
            apiVersion: cluster.x-k8s.io/v1beta1
            kind: Machine
            metadata: {name: %1$s, namespace: %2$s}
            spec: {clusterName: %3$s}
            """
                .formatted(name, ns, cluster));
    String machineUid = machineUid(infra, ns, name);
    infra
        .kubectl()
        .apply(
            """
            apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
            kind: KubevirtMachine
            metadata:
              name: %1$s
              namespace: %2$s
              ownerReferences:
              - {apiVersion: cluster.x-k8s.io/v1beta1, kind: Machine, name: %1$s, uid: %3$s}
            """
                .formatted(name, ns, machineUid));
  }

  static String machineUid(LocalCluster infra, String ns, String name) {
    return infra
        .kubectl()
        .runOrFail(
            null,
            "-n",
            ns,
            "get",
            "machines.cluster.x-k8s.io",
            name,
            "-o",
            "jsonpath={.metadata.uid}")
        .trim();
  }

  /** KubeVirt's CR in namespace {@code ns}, setting the cluster-wide eviction strategy. */
  static void kubeVirtWithStrategy(LocalCluster infra, String ns, String strategy) {
    namespace(infra, ns);
    infra
        .kubectl()
        .apply(
            """
        apiVersion: kubevirt.io/v1
        kind: KubeVirt
        metadata: {name: kubevirt, namespace: %s}
        spec:
          configuration: {evictionStrategy: %s}
        """
                .formatted(ns, strategy));
  }

  /** A tenant: namespace {@code ns}, its Cluster and the Cluster's kubeconfig Secret. */
  static void tenant(LocalCluster infra, String ns, String cluster, String guestKubeconfig) {
    namespace(infra, ns);
    cluster(infra, ns, cluster);
    kubeconfigSecret(infra, ns, cluster, guestKubeconfig);
  }

  /**
   * Starts the controller in this JVM through its Main, as its ServiceAccount ({@code kubeconfig}),
   * with no metrics endpoint and a health endpoint on a free port (unless {@code flags} name their
   * own), and waits until it is ready.
   *
   * @param leaderElectionId null for no leader election; else a short lease of that name, so a
   *     restart in the same test takes over within seconds
   * @param flags the test's own flags (namespace, timeouts...)
   */
  static dev.capk.vmieviction.manager.Manager startManager(
      Path kubeconfig, String leaderElectionId, String... flags) throws Exception {
    dev.capk.vmieviction.manager.Manager manager =
        dev.capk.vmieviction.manager.Main.start(managerArgs(kubeconfig, leaderElectionId, flags));
    Await.until("controller ready", WAIT, manager::ready);
    return manager;
  }

  /** The arguments {@link #startManager} starts the controller with. */
  static String[] managerArgs(Path kubeconfig, String leaderElectionId, String... flags) {
    List<String> args = new java.util.ArrayList<>(List.of("--kubeconfig", kubeconfig.toString()));
    // No metrics endpoint, probes on a free port: unless the test's flags name their own.
    if (!List.of(flags).contains("--metrics-bind-address")) {
      args.addAll(List.of("--metrics-bind-address", "0"));
    }
    if (!List.of(flags).contains("--health-probe-bind-address")) {
      args.addAll(List.of("--health-probe-bind-address", "127.0.0.1:0"));
    }
    if (leaderElectionId != null) {
      args.addAll(
          List.of(
              "--leader-elect",
              "--leader-election-namespace",
              CONTROLLER_NAMESPACE,
              "--leader-election-id",
              leaderElectionId,
              "--leader-election-lease-duration",
              "4s",
              "--leader-election-renew-deadline",
              "3s",
              "--leader-election-retry-period",
              "500ms"));
    }
    args.addAll(List.of(flags));
    return args.toArray(String[]::new);
  }

  /** Creates or replaces the kubeconfig Secret {@code <cluster>-kubeconfig} with {@code value}. */
  static void kubeconfigSecret(LocalCluster infra, String ns, String cluster, String value) {
    String encoded = Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
    infra
        .kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Secret
        metadata:
          name: %s-kubeconfig
          namespace: %s
          labels: {cluster.x-k8s.io/cluster-name: %1$s}
        type: cluster.x-k8s.io/secret
        data:
          value: %s
        """
                .formatted(cluster, ns, encoded));
  }

  /**
   * A CAPK-labelled VMI; {@code strategy} null leaves spec.evictionStrategy unset. Returns its UID.
   */
  static String vmi(LocalCluster infra, String ns, String name, String cluster, String strategy)
      throws ApiException {
    infra
        .kubectl()
        .apply(
            """
        apiVersion: kubevirt.io/v1
        kind: VirtualMachineInstance
        metadata:
          name: %1$s
          namespace: %2$s
          labels:
            kubevirt.io/vm: %1$s
            cluster.x-k8s.io/cluster-name: %3$s
            capk.cluster.x-k8s.io/kubevirt-machine-name: %1$s
            capk.cluster.x-k8s.io/kubevirt-machine-namespace: %2$s
        spec:
          %4$s
          domain:
            cpu: {cores: 2}
            devices: {disks: [{name: root, disk: {bus: virtio}}]}
            resources: {requests: {memory: 2Gi}}
        """
                .formatted(
                    name, ns, cluster, strategy == null ? "" : "evictionStrategy: " + strategy));
    return uid(get(infra, ns, name).orElseThrow());
  }

  /** What KubeVirt writes: the VMI runs on {@code infraNode}. */
  static void running(LocalCluster infra, String ns, String name, String infraNode)
      throws ApiException {
    patchStatus(
        infra, ns, name, "{\"status\":{\"phase\":\"Running\",\"nodeName\":\"" + infraNode + "\"}}");
  }

  /**
   * What KubeVirt does after the controller deleted an evacuated VMI: once the old one is gone, a
   * new VMI of the same name (External, a new UID) runs on {@code infraNode}.
   *
   * @return the new VMI's UID
   */
  static String recreatedRunning(
      LocalCluster infra, String ns, String name, String cluster, String infraNode)
      throws ApiException {
    awaitGone(infra, ns, name);
    String uid = vmi(infra, ns, name, cluster, "External");
    running(infra, ns, name, infraNode);
    return uid;
  }

  /** What KubeVirt writes when it refuses the eviction of an External VMI's pod. */
  static void evacuate(LocalCluster infra, String ns, String name, String infraNode)
      throws ApiException {
    patchStatus(
        infra,
        ns,
        name,
        "{\"status\":{\"phase\":\"Running\",\"nodeName\":\""
            + infraNode
            + "\",\"evacuationNodeName\":\""
            + infraNode
            + "\"}}");
  }

  private static void patchStatus(LocalCluster infra, String ns, String name, String patch)
      throws ApiException {
    CustomObjectsApi custom = new CustomObjectsApi(infra.client());
    PatchUtils.patch(
        Object.class,
        () ->
            custom
                .patchNamespacedCustomObjectStatus(
                    "kubevirt.io", "v1", ns, "virtualmachineinstances", name, new V1Patch(patch))
                .buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
        infra.client());
  }

  @SuppressWarnings("unchecked")
  static Optional<Map<String, Object>> get(LocalCluster infra, String ns, String name)
      throws ApiException {
    try {
      return Optional.of(
          (Map<String, Object>)
              new CustomObjectsApi(infra.client())
                  .getNamespacedCustomObject(
                      "kubevirt.io", "v1", ns, "virtualmachineinstances", name)
                  .execute());
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @SuppressWarnings("unchecked")
  static String uid(Map<String, Object> vmi) {
    return (String) ((Map<String, Object>) vmi.get("metadata")).get("uid");
  }

  @SuppressWarnings("unchecked")
  static Optional<String> annotation(Map<String, Object> vmi, String key) {
    Map<String, Object> meta = (Map<String, Object>) vmi.get("metadata");
    Map<String, String> annotations = (Map<String, String>) meta.get("annotations");
    return Optional.ofNullable(annotations == null ? null : annotations.get(key));
  }

  @SuppressWarnings("unchecked")
  static boolean deleting(Map<String, Object> vmi) {
    return ((Map<String, Object>) vmi.get("metadata")).get("deletionTimestamp") != null;
  }

  /** The VMI with this UID is gone or being deleted. */
  static boolean deletedOrDeleting(LocalCluster infra, String ns, String name, String uid)
      throws ApiException {
    Optional<Map<String, Object>> v = get(infra, ns, name);
    return v.isEmpty() || !uid(v.get()).equals(uid) || deleting(v.get());
  }

  static void awaitDeleted(LocalCluster infra, String ns, String name, String uid) {
    Await.until(
        "VMI " + ns + "/" + name + " (uid " + uid + ") deleted",
        WAIT,
        () -> deletedOrDeleting(infra, ns, name, uid));
  }

  /** Waits until no object of that name exists at all (Foreground deletion finished). */
  static void awaitGone(LocalCluster infra, String ns, String name) {
    Await.until("VMI " + ns + "/" + name + " gone", WAIT, () -> get(infra, ns, name).isEmpty());
  }

  /** Events about the object named {@code name} in {@code ns}. */
  static List<CoreV1Event> events(LocalCluster c, String ns, String name) throws ApiException {
    return new CoreV1Api(c.client())
        .listNamespacedEvent(ns)
        .fieldSelector("involvedObject.name=" + name)
        .execute()
        .getItems();
  }

  static Optional<CoreV1Event> event(LocalCluster c, String ns, String name, String reason)
      throws ApiException {
    return events(c, ns, name).stream().filter(e -> reason.equals(e.getReason())).findFirst();
  }

  static CoreV1Event awaitEvent(LocalCluster c, String ns, String name, String reason) {
    Await.until(
        "event " + reason + " on " + ns + "/" + name,
        WAIT,
        () -> event(c, ns, name, reason).isPresent());
    try {
      return event(c, ns, name, reason).orElseThrow();
    } catch (ApiException e) {
      throw new AssertionError(e);
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Guest: nodes and workloads.

  static V1Node node(LocalCluster guest, String name) throws ApiException {
    return new CoreV1Api(guest.client()).readNode(name).execute();
  }

  static boolean unschedulable(V1Node n) {
    return n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
  }

  static Optional<String> nodeAnnotation(V1Node n, String key) {
    Map<String, String> a = n.getMetadata().getAnnotations();
    return Optional.ofNullable(a == null ? null : a.get(key));
  }

  static void cordon(LocalCluster guest, String node, boolean cordoned) {
    guest.kubectl().runOrFail(null, cordoned ? "cordon" : "uncordon", node);
  }

  /**
   * A Deployment of {@code replicas} pods that may run on {@code nodes} only, protected by a
   * PodDisruptionBudget of {@code minAvailable}. Waits until all replicas run.
   */
  static void workload(
      LocalCluster guest,
      String ns,
      String app,
      int replicas,
      int minAvailable,
      List<String> nodes) {
    guest
        .kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Namespace
        metadata: {name: %1$s}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: %2$s, namespace: %1$s}
        spec:
          replicas: %3$d
          selector: {matchLabels: {app: %2$s}}
          template:
            metadata: {labels: {app: %2$s}}
            spec:
              terminationGracePeriodSeconds: 1
              affinity:
                nodeAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                    nodeSelectorTerms:
                    - matchExpressions:
                      - {key: kubernetes.io/hostname, operator: In, values: [%5$s]}
              containers: [{name: main, image: %2$s:fake}]
        ---
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: %2$s-pdb, namespace: %1$s}
        spec:
          minAvailable: %4$d
          selector: {matchLabels: {app: %2$s}}
        """
                .formatted(ns, app, replicas, minAvailable, String.join(", ", nodes)));
    Await.until(
        replicas + " running pods of " + ns + "/" + app,
        WAIT,
        () -> running(guest, ns, app).size() == replicas);
    awaitBudget(guest, ns, app + "-pdb", replicas, null);
  }

  /**
   * Waits until budget {@code ns/name}'s status counts {@code healthy} pods and, unless {@code
   * allowed} is null, allows that many disruptions.
   */
  static void awaitBudget(
      LocalCluster guest, String ns, String name, int healthy, Integer allowed) {
    Await.until(
        "budget " + ns + "/" + name + " computed",
        WAIT,
        () -> {
          var status =
              new io.kubernetes.client.openapi.apis.PolicyV1Api(guest.client())
                  .readNamespacedPodDisruptionBudget(name, ns)
                  .execute()
                  .getStatus();
          return status != null
              && Integer.valueOf(healthy).equals(status.getCurrentHealthy())
              && (allowed == null || allowed.equals(status.getDisruptionsAllowed()));
        });
  }

  static List<V1Pod> running(LocalCluster guest, String ns, String app) throws ApiException {
    return new CoreV1Api(guest.client())
        .listNamespacedPod(ns).labelSelector("app=" + app).execute().getItems().stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
            .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
            .toList();
  }

  static List<V1Pod> podsOn(LocalCluster guest, String ns, String node) throws ApiException {
    return new CoreV1Api(guest.client())
        .listNamespacedPod(ns)
        .fieldSelector("spec.nodeName=" + node)
        .execute()
        .getItems();
  }

  /**
   * A Ready Node that no kwok manages: kwok, which plays the kubelets, completes the deletion of
   * every pod it runs (and clears its finalizers); a pod bound here stays terminating instead, as
   * on a node whose kubelet never confirms.
   */
  static void readyNodeWithoutKubelet(LocalCluster guest, String name) throws Exception {
    CoreV1Api core = new CoreV1Api(guest.client());
    core.createNode(
            new V1Node()
                .metadata(
                    new V1ObjectMeta().name(name).labels(Map.of("kubernetes.io/hostname", name))))
        .execute();
    String now =
        DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.SECONDS));
    String status =
        """
        {"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready",
        "lastHeartbeatTime":"%1$s","lastTransitionTime":"%1$s"}]}}"""
            .formatted(now);
    PatchUtils.patch(
        V1Node.class,
        () -> core.patchNodeStatus(name, new V1Patch(status)).buildCall(null),
        V1Patch.PATCH_FORMAT_STRATEGIC_MERGE_PATCH,
        guest.client());
  }

  /**
   * The PATCH requests on VMIs (not their status) the infra API server has answered since it
   * started, from its own metrics: the controller's annotation writes, in a test where nothing else
   * patches a VMI.
   */
  static long vmiPatches(LocalCluster infra) {
    long sum = 0;
    for (String line : infra.kubectl().runOrFail(null, "get", "--raw", "/metrics").split("\n")) {
      if (line.startsWith("apiserver_request_total{")
          && line.contains("resource=\"virtualmachineinstances\"")
          && line.contains("subresource=\"\"")
          && line.contains("verb=\"PATCH\"")) {
        sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  static String unique(String prefix) {
    return prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
  }

  static Path tempDir(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
