package dev.capk.vmieviction.e2e.integration.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Directories;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.maintenance.NodeMaintenanceController;
import dev.capk.vmieviction.maintenance.NodeMaintenanceSettings;
import dev.capk.vmieviction.runtime.ControllerRuntime;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds NodeMaintenance scenarios on a local cluster: the CRD from {@code config/crd}, the
 * controller running as a ServiceAccount bound only to the RBAC of the opt-in component {@code
 * config/components/node-maintenance} (so a missing permission fails the tests), kwok nodes, pods
 * bound straight to a node.
 */
final class MaintenanceFixture {
  static final Duration WAIT = Duration.ofSeconds(90);
  static final String CONTROLLER_NS = "nm-it-system";

  /** Own prefix: other suites apply config/rbac with theirs to the same kind of cluster. */
  static final String PREFIX = "nmit-";

  private MaintenanceFixture() {}

  static void installCrd(LocalCluster c) {
    Path crd =
        RepoPaths.root().resolve("config/crd/nodemaintenance.medik8s.io_nodemaintenances.yaml");
    c.kubectl().runOrFail(null, "apply", "--server-side", "-f", crd.toString());
    c.kubectl()
        .runOrFail(
            null, "wait", "--for=condition=Established", "--timeout=60s", "-f", crd.toString());
  }

  /**
   * Applies the component {@code config/components/node-maintenance} (CRD, role and binding) beside
   * the controller's ServiceAccount, and returns a kubeconfig holding a token of that
   * ServiceAccount: exactly the NodeMaintenance RBAC, as a deployment with the component enabled
   * grants it.
   */
  static String controllerKubeconfig(LocalCluster c) throws Exception {
    c.kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Namespace
        metadata: {name: %s}
        """
                .formatted(CONTROLLER_NS));
    Path dir = Files.createTempDirectory("nm-rbac");
    Files.copy(
        RepoPaths.root().resolve("config/rbac/service_account.yaml"),
        dir.resolve("service_account.yaml"));
    Path component =
        RepoPaths.root().resolve("config/components/node-maintenance").toAbsolutePath().normalize();
    Files.writeString(
        dir.resolve("kustomization.yaml"),
        """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        namespace: %s
        namePrefix: %s
        resources:
        - service_account.yaml
        components:
        - %s
        """
            .formatted(
                CONTROLLER_NS,
                PREFIX,
                // kustomize takes components by relative path only
                dir.toAbsolutePath().relativize(component)));
    try {
      c.kubectl().runOrFail(null, "apply", "-k", dir.toString());
    } finally {
      // Applied (or not): the kustomization is left nowhere.
      Directories.deleteRecursively(dir);
    }
    AuthenticationV1TokenRequest issued =
        new CoreV1Api(c.client())
            .createNamespacedServiceAccountToken(
                PREFIX + "vmi-eviction-controller",
                CONTROLLER_NS,
                new AuthenticationV1TokenRequest()
                    .spec(new V1TokenRequestSpec().expirationSeconds(3600L).audiences(List.of())))
            .execute();
    return c.kubeconfigWithToken("node-maintenance-it", issued.getStatus().getToken());
  }

  static ApiClient client(String kubeconfig, Duration readTimeout) {
    try (Reader r = new StringReader(kubeconfig)) {
      ApiClient client = ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(r)).build();
      client.setReadTimeout((int) readTimeout.toMillis());
      return client;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The controller alone, on the manager's runtime without leader election, with short drain
   * attempts, so blocked drains are retried within seconds.
   */
  static ControllerRuntime startController(String kubeconfig) {
    return startController(
        kubeconfig,
        settings(Duration.ofSeconds(1), NodeMaintenanceSettings.defaults().maxRetryInterval(), 3));
  }

  /** The defaults with short drain steps (3 s) and the given retry waits and workers. */
  static NodeMaintenanceSettings settings(Duration retry, Duration maxRetry, int workers) {
    NodeMaintenanceSettings d = NodeMaintenanceSettings.defaults();
    return new NodeMaintenanceSettings(
        d.taints(),
        Duration.ofSeconds(3),
        retry,
        d.maxBackoff(),
        d.progressInterval(),
        workers,
        d.resync(),
        maxRetry);
  }

  static ControllerRuntime startController(String kubeconfig, NodeMaintenanceSettings settings) {
    NodeMaintenanceController c =
        new NodeMaintenanceController(
            client(kubeconfig, Duration.ofSeconds(15)),
            client(kubeconfig, Duration.ZERO),
            settings);
    ControllerRuntime runtime =
        new ControllerRuntime(List.of(c), null, Duration.ofSeconds(10)).start();
    Await.until("node maintenance controller synced", WAIT, runtime::ready);
    return runtime;
  }

  static String unique(String prefix) {
    return prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
  }

  static void namespace(LocalCluster c, String name) {
    c.kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Namespace
        metadata: {name: %s}
        """
                .formatted(name));
    Await.until(
        "ServiceAccount default in " + name,
        WAIT,
        () -> {
          new CoreV1Api(c.client()).readNamespacedServiceAccount("default", name).execute();
          return true;
        });
  }

  /** A pod bound to {@code node} (no scheduler), labelled app={@code app}, quick to terminate. */
  static void pod(LocalCluster c, String ns, String name, String node, String app) {
    c.kubectl()
        .apply(
            """
        apiVersion: v1
        kind: Pod
        metadata: {name: %s, namespace: %s, labels: {app: %s}}
        spec:
          nodeName: %s
          terminationGracePeriodSeconds: 1
          containers: [{name: main, image: "fake/%s:1"}]
          volumes: [{name: scratch, emptyDir: {}}]
        """
                .formatted(name, ns, app, node, app));
  }

  /**
   * Budget {@code db} (minAvailable 1) over the pod {@code db-0} already created in {@code ns}:
   * waits until the namespace's {@code runningPods} run and kube-controller-manager computed that
   * the budget allows no disruption.
   */
  static void budgetNeverAllowingDb(LocalCluster cluster, String ns, int runningPods) {
    cluster
        .kubectl()
        .apply(
            """
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: db, namespace: %s}
        spec:
          minAvailable: 1
          selector: {matchLabels: {app: db}}
        """
                .formatted(ns));
    awaitRunning(cluster, ns, runningPods);
    PolicyV1Api policy = new PolicyV1Api(cluster.client());
    Await.until(
        "PDB db computed by kube-controller-manager",
        WAIT,
        () -> {
          var s = policy.readNamespacedPodDisruptionBudget("db", ns).execute().getStatus();
          return s != null
              && s.getExpectedPods() != null
              && s.getExpectedPods() == 1
              && s.getCurrentHealthy() == 1
              && s.getDisruptionsAllowed() == 0;
        });
  }

  static void awaitRunning(LocalCluster c, String ns, int count) {
    Await.until(
        count + " Running pods in " + ns,
        WAIT,
        () ->
            new CoreV1Api(c.client())
                    .listNamespacedPod(ns).execute().getItems().stream()
                        .filter(
                            p ->
                                p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
                        .count()
                == count);
  }

  static List<String> podsOn(LocalCluster c, String node) throws ApiException {
    return new CoreV1Api(c.client())
            .listPodForAllNamespaces()
            .fieldSelector("spec.nodeName=" + node)
            .execute()
            .getItems()
            .stream()
            .map(p -> p.getMetadata().getNamespace() + "/" + p.getMetadata().getName())
            .sorted()
            .toList();
  }

  static void create(LocalCluster c, String name, String node, String reason) {
    c.kubectl()
        .apply(
            """
        apiVersion: nodemaintenance.medik8s.io/v1beta1
        kind: NodeMaintenance
        metadata: {name: %s}
        spec:
          nodeName: %s
          reason: "%s"
        """
                .formatted(name, node, reason));
  }

  static void create(
      LocalCluster c, String name, String node, String reason, String evictionTimeout) {
    c.kubectl()
        .apply(
            """
        apiVersion: nodemaintenance.medik8s.io/v1beta1
        kind: NodeMaintenance
        metadata: {name: %s}
        spec:
          nodeName: %s
          reason: "%s"
          evictionTimeout: "%s"
        """
                .formatted(name, node, reason, evictionTimeout));
  }

  static void delete(LocalCluster c, String name) {
    c.kubectl().runOrFail(null, "delete", "nodemaintenance", name, "--wait=false");
  }

  @SuppressWarnings("unchecked")
  static Optional<Map<String, Object>> get(LocalCluster c, String name) throws ApiException {
    try {
      return Optional.of(
          (Map<String, Object>)
              new CustomObjectsApi(c.client())
                  .getClusterCustomObject(
                      NodeMaintenanceApi.GROUP,
                      NodeMaintenanceApi.VERSION,
                      NodeMaintenanceApi.PLURAL,
                      name)
                  .execute());
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> status(LocalCluster c, String name) throws ApiException {
    Object s =
        get(c, name)
            .orElseThrow(() -> new AssertionError("NodeMaintenance " + name + " not found"))
            .get("status");
    return s == null ? Map.of() : (Map<String, Object>) s;
  }

  static String phase(LocalCluster c, String name) throws ApiException {
    return (String) status(c, name).get("phase");
  }

  static int intField(Map<String, Object> status, String field) {
    Object v = status.get(field);
    return v == null ? 0 : ((Number) v).intValue();
  }

  @SuppressWarnings("unchecked")
  static List<String> pendingPods(Map<String, Object> status) {
    Object v = status.get("pendingPods");
    return v == null ? List.of() : (List<String>) v;
  }

  @SuppressWarnings("unchecked")
  static List<String> finalizers(Map<String, Object> nm) {
    Object f = ((Map<String, Object>) nm.get("metadata")).get("finalizers");
    return f == null ? List.of() : (List<String>) f;
  }

  static void awaitPhase(LocalCluster c, String name, String phase) {
    Await.until(
        "NodeMaintenance " + name + " phase " + phase, WAIT, () -> phase.equals(phase(c, name)));
  }

  static void awaitGone(LocalCluster c, String name) {
    Await.until("NodeMaintenance " + name + " gone", WAIT, () -> get(c, name).isEmpty());
  }

  /**
   * Taints as {@code key[=value]:Effect} (time stamps left out), and the cordon, via kubectl's own
   * view.
   */
  record NodeState(boolean unschedulable, List<String> taints, Optional<String> mark) {}

  static NodeState nodeState(LocalCluster c, String node) throws ApiException {
    var n = new CoreV1Api(c.client()).readNode(node).execute();
    List<String> taints = new ArrayList<>();
    if (n.getSpec().getTaints() != null) {
      n.getSpec()
          .getTaints()
          .forEach(
              t ->
                  taints.add(
                      t.getKey()
                          + (t.getValue() == null ? "" : "=" + t.getValue())
                          + ":"
                          + t.getEffect()));
    }
    Map<String, String> annotations = n.getMetadata().getAnnotations();
    return new NodeState(
        Boolean.TRUE.equals(n.getSpec().getUnschedulable()),
        taints,
        Optional.ofNullable(
            annotations == null
                ? null
                : annotations.get(NodeMaintenanceApi.NODE_STATE_ANNOTATION)));
  }

  /**
   * A node whose taints the node lifecycle controller has settled: no not-ready taint left from its
   * start, and the unschedulable taint present exactly when the node is cordoned.
   */
  static NodeState awaitSettled(LocalCluster c, String node) {
    NodeState[] seen = new NodeState[1];
    Await.until(
        "taints of node " + node + " settled",
        WAIT,
        () -> {
          NodeState s = nodeState(c, node);
          seen[0] = s;
          boolean notReady =
              s.taints().stream()
                  .anyMatch(
                      t ->
                          t.startsWith("node.kubernetes.io/not-ready")
                              || t.startsWith("node.kubernetes.io/unreachable"));
          boolean unschedulableTaint =
              s.taints().contains("node.kubernetes.io/unschedulable:NoSchedule");
          return !notReady && unschedulableTaint == s.unschedulable();
        });
    return seen[0];
  }

  static List<CoreV1Event> events(LocalCluster c, String kind, String name) throws ApiException {
    return new CoreV1Api(c.client())
        .listNamespacedEvent("default")
        .fieldSelector("involvedObject.kind=" + kind + ",involvedObject.name=" + name)
        .execute()
        .getItems();
  }

  static CoreV1Event awaitEvent(LocalCluster c, String kind, String name, String reason) {
    List<CoreV1Event> found = new ArrayList<>();
    Await.until(
        "event " + reason + " on " + kind + " " + name,
        WAIT,
        () -> {
          found.clear();
          events(c, kind, name).stream()
              .filter(e -> reason.equals(e.getReason()))
              .findFirst()
              .ifPresent(found::add);
          return !found.isEmpty();
        });
    return found.get(0);
  }
}
