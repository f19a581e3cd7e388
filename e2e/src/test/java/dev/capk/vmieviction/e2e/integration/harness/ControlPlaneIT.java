package dev.capk.vmieviction.e2e.integration.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.KwokNodes;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Eviction;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.util.PatchUtils;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The local control planes are real Kubernetes: scheduling, PDB status, eviction, DaemonSets, CRDs.
 */
class ControlPlaneIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("infra");

  @RegisterExtension
  static final LocalClusterExtension guest = LocalClusterExtension.shared("guest-a");

  private static List<String> nodes;

  @BeforeAll
  static void nodes() {
    nodes = infra.cluster().kwokNodes().create("harness", 2);
  }

  @Test
  void twoClustersRunSideBySideWithSeparateData() throws Exception {
    LocalCluster a = infra.cluster();
    LocalCluster b = guest.cluster();
    assertNotEquals(a.serverUrl(), b.serverUrl());
    for (LocalCluster c : List.of(a, b)) {
      String readyz = c.kubectl().runOrFail(null, "get", "--raw", "/readyz");
      assertEquals("ok", readyz.strip(), c.name() + " /readyz");
    }
    new CoreV1Api(a.client())
        .createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name("only-in-infra")))
        .execute();
    ApiException notThere =
        assertThrows(
            ApiException.class,
            () -> new CoreV1Api(b.client()).readNamespace("only-in-infra").execute());
    assertEquals(404, notThere.getCode());
  }

  @Test
  void kwokNodesAreReadyAndTheSchedulerBindsDeploymentPodsToThem() throws Exception {
    LocalCluster c = infra.cluster();
    CoreV1Api core = new CoreV1Api(c.client());
    for (String n : nodes) {
      assertTrue(KwokNodes.isReady(core.readNode(n).execute()), n + " Ready");
    }
    String ns = namespace(c, "deploy");
    c.kubectl().apply(deployment(ns, "web", 3));
    Await.until(
        "3 Running pods of deployment web",
        Duration.ofSeconds(60),
        () -> runningPods(c, ns, "app=web").size() == 3);
    for (V1Pod p : runningPods(c, ns, "app=web")) {
      assertTrue(
          nodes.contains(p.getSpec().getNodeName()) || p.getSpec().getNodeName().startsWith("kwok"),
          "pod bound to a kwok node: " + p.getSpec().getNodeName());
    }
  }

  @Test
  void evictionHonoursThePodDisruptionBudgetTheControllerManagerComputes() throws Exception {
    LocalCluster c = infra.cluster();
    String ns = namespace(c, "pdb");
    c.kubectl().apply(deployment(ns, "db", 2));
    c.kubectl()
        .apply(
            """
                apiVersion: policy/v1
                kind: PodDisruptionBudget
                metadata: {name: db, namespace: %s}
                spec:
                  minAvailable: 2
                  selector: {matchLabels: {app: db}}
                """
                .formatted(ns));
    PolicyV1Api policy = new PolicyV1Api(c.client());
    Await.until(
        "PDB db status from kube-controller-manager",
        Duration.ofSeconds(60),
        () -> {
          V1PodDisruptionBudget pdb = policy.readNamespacedPodDisruptionBudget("db", ns).execute();
          return pdb.getStatus() != null
              && pdb.getStatus().getCurrentHealthy() != null
              && pdb.getStatus().getCurrentHealthy() == 2
              && pdb.getStatus().getExpectedPods() == 2;
        });
    V1Pod victim = runningPods(c, ns, "app=db").get(0);
    CoreV1Api core = new CoreV1Api(c.client());
    ApiException refused = assertThrows(ApiException.class, () -> evict(core, victim));
    assertEquals(429, refused.getCode(), "eviction that would break the budget");

    c.kubectl()
        .runOrFail(
            null,
            "-n",
            ns,
            "patch",
            "pdb",
            "db",
            "--type=merge",
            "-p",
            "{\"spec\":{\"minAvailable\":1}}");
    Await.until(
        "PDB db to allow one disruption",
        Duration.ofSeconds(60),
        () ->
            policy
                    .readNamespacedPodDisruptionBudget("db", ns)
                    .execute()
                    .getStatus()
                    .getDisruptionsAllowed()
                == 1);
    evict(core, victim);
    Await.until(
        "evicted pod " + victim.getMetadata().getName() + " to disappear",
        Duration.ofSeconds(60),
        () -> {
          try {
            V1Pod p = core.readNamespacedPod(victim.getMetadata().getName(), ns).execute();
            return !p.getMetadata().getUid().equals(victim.getMetadata().getUid());
          } catch (ApiException e) {
            return e.getCode() == 404;
          }
        });
    Await.until(
        "the ReplicaSet to replace the evicted pod",
        Duration.ofSeconds(60),
        () -> {
          List<V1Pod> pods = runningPods(c, ns, "app=db");
          return pods.size() == 2
              && pods.stream()
                  .noneMatch(p -> p.getMetadata().getUid().equals(victim.getMetadata().getUid()));
        });
  }

  @Test
  void aDaemonSetGetsOnePodOnEachKwokNode() throws Exception {
    LocalCluster c = infra.cluster();
    String ns = namespace(c, "ds");
    c.kubectl()
        .apply(
            """
                apiVersion: apps/v1
                kind: DaemonSet
                metadata: {name: agent, namespace: %s}
                spec:
                  selector: {matchLabels: {app: agent}}
                  template:
                    metadata: {labels: {app: agent}}
                    spec:
                      containers: [{name: agent, image: agent:fake}]
                """
                .formatted(ns));
    int kwokNodes =
        new CoreV1Api(c.client()).listNode().labelSelector("type=kwok").execute().getItems().size();
    Await.until(
        "one agent pod Running on each of " + kwokNodes + " kwok nodes",
        Duration.ofSeconds(60),
        () -> {
          List<V1Pod> pods = runningPods(c, ns, "app=agent");
          Set<String> on = new HashSet<>();
          pods.forEach(p -> on.add(p.getSpec().getNodeName()));
          return pods.size() == kwokNodes && on.size() == kwokNodes;
        });
    assertEquals(
        kwokNodes,
        new AppsV1Api(c.client())
            .readNamespacedDaemonSet("agent", ns)
            .execute()
            .getStatus()
            .getDesiredNumberScheduled());
  }

  @Test
  @SuppressWarnings("unchecked")
  void aVmiRoundTripsWithUnknownFieldsAndItsStatusCanBePatched() throws Exception {
    LocalCluster c = infra.cluster();
    Crds.installTestCrds(c);
    String ns = namespace(c, "vmi");
    c.kubectl()
        .apply(
            """
                apiVersion: kubevirt.io/v1
                kind: VirtualMachineInstance
                metadata: {name: vm-1, namespace: %s}
                spec:
                  evictionStrategy: External
                  domain:
                    cpu: {cores: 2}
                    devices: {disks: [{name: root, disk: {bus: virtio}}]}
                    resources: {requests: {memory: 2Gi}}
                  someFutureField: {keep: me}
                """
                .formatted(ns));
    CustomObjectsApi custom = new CustomObjectsApi(c.client());
    Map<String, Object> vmi =
        (Map<String, Object>)
            custom
                .getNamespacedCustomObject(
                    "kubevirt.io", "v1", ns, "virtualmachineinstances", "vm-1")
                .execute();
    Map<String, Object> spec = (Map<String, Object>) vmi.get("spec");
    assertEquals(Map.of("keep", "me"), spec.get("someFutureField"));
    assertEquals(
        2.0,
        ((Number)
                ((Map<String, Object>) ((Map<String, Object>) spec.get("domain")).get("cpu"))
                    .get("cores"))
            .doubleValue());

    PatchUtils.patch(
        Object.class,
        () ->
            custom
                .patchNamespacedCustomObjectStatus(
                    "kubevirt.io",
                    "v1",
                    ns,
                    "virtualmachineinstances",
                    "vm-1",
                    new V1Patch(
                        "{\"status\":{\"phase\":\"Running\",\"nodeName\":\"harness-0\",\"evacuationNodeName\":\"harness-0\"}}"))
                .buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
        c.client());
    Map<String, Object> after =
        (Map<String, Object>)
            custom
                .getNamespacedCustomObject(
                    "kubevirt.io", "v1", ns, "virtualmachineinstances", "vm-1")
                .execute();
    assertEquals(
        "harness-0", ((Map<String, Object>) after.get("status")).get("evacuationNodeName"));
    assertEquals(
        Map.of("keep", "me"), ((Map<String, Object>) after.get("spec")).get("someFutureField"));
    for (String crd :
        List.of(
            "virtualmachines.kubevirt.io", "kubevirts.kubevirt.io", "clusters.cluster.x-k8s.io")) {
      String established =
          c.kubectl()
              .runOrFail(
                  null,
                  "get",
                  "crd",
                  crd,
                  "-o",
                  "jsonpath={.status.conditions[?(@.type==\"Established\")].status}");
      assertEquals("True", established, crd + " Established");
    }
  }

  private static String namespace(LocalCluster c, String prefix) throws ApiException {
    String name = prefix + "-" + Long.toHexString(System.nanoTime());
    new CoreV1Api(c.client())
        .createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(name)))
        .execute();
    return name;
  }

  private static String deployment(String ns, String app, int replicas) {
    return """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: %2$s, namespace: %1$s}
                spec:
                  replicas: %3$d
                  selector: {matchLabels: {app: %2$s}}
                  template:
                    metadata: {labels: {app: %2$s}}
                    spec:
                      containers: [{name: main, image: %2$s:fake}]
                """
        .formatted(ns, app, replicas);
  }

  private static List<V1Pod> runningPods(LocalCluster c, String ns, String selector)
      throws ApiException {
    return new CoreV1Api(c.client())
        .listNamespacedPod(ns).labelSelector(selector).execute().getItems().stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
            .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
            .toList();
  }

  /**
   * POSTs a policy/v1 Eviction. The server answers with a Status, which the generated client would
   * try to read as a V1Eviction and reject, so the call is executed raw and judged by its HTTP
   * code.
   */
  private static void evict(CoreV1Api core, V1Pod pod) throws Exception {
    V1Eviction eviction =
        new V1Eviction()
            .metadata(
                new V1ObjectMeta()
                    .name(pod.getMetadata().getName())
                    .namespace(pod.getMetadata().getNamespace()))
            .deleteOptions(new V1DeleteOptions());
    try (okhttp3.Response response =
        core.createNamespacedPodEviction(
                pod.getMetadata().getName(), pod.getMetadata().getNamespace(), eviction)
            .buildCall(null)
            .execute()) {
      if (!response.isSuccessful()) {
        throw new ApiException(
            response.code(), response.body() == null ? "" : response.body().string());
      }
    }
  }
}
