package dev.capk.vmieviction.e2e.integration.drain;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1DaemonSetSpec;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1EmptyDirVolumeSource;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudgetSpec;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.util.PatchUtils;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Builds drain scenarios on a local cluster, fast and deterministic: pods are bound to their node
 * directly (no scheduler), "managed" pods name a real ConfigMap as their controller (kubectl only
 * asks whether a controller is declared), and every pod carries a {@code role} label so two
 * identical setups in different namespaces can be compared pod for pod.
 */
final class DrainFixture {
  static final String ROLE = "role";
  private static final AtomicInteger SEQ = new AtomicInteger();

  final LocalCluster cluster;
  final CoreV1Api core;
  final AppsV1Api apps;
  final PolicyV1Api policy;

  DrainFixture(LocalCluster cluster) {
    this.cluster = cluster;
    this.core = new CoreV1Api(cluster.client());
    this.apps = new AppsV1Api(cluster.client());
    this.policy = new PolicyV1Api(cluster.client());
  }

  /** A unique lowercase suffix for names of one test. */
  static String unique(String prefix) {
    return prefix
        + "-"
        + SEQ.incrementAndGet()
        + "-"
        + Long.toString(System.nanoTime() % 1_000_000L, 36);
  }

  /** Kwok nodes {@code prefix-0..n-1}, Ready. */
  List<String> nodes(String prefix, int count) {
    return cluster.kwokNodes().create(prefix, count);
  }

  /**
   * A Node no kubelet (and no kwok) serves: its pods never run and a graceful deletion never
   * completes.
   */
  String ghostNode(String name) throws ApiException {
    core.createNode(
            new V1Node()
                .metadata(
                    new V1ObjectMeta().name(name).labels(Map.of("kubernetes.io/hostname", name)))
                .status(new V1NodeStatus().capacity(Map.of("pods", Quantity.fromString("100")))))
        .execute();
    return name;
  }

  /** A namespace whose default ServiceAccount exists (pods need it). */
  String namespace(String name) throws ApiException {
    core.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(name))).execute();
    Await.until(
        "ServiceAccount default in " + name,
        Duration.ofSeconds(60),
        () -> {
          core.readNamespacedServiceAccount("default", name).execute();
          return true;
        });
    return name;
  }

  /** A ConfigMap to stand as the declared controller of "managed" pods. */
  V1OwnerReference owner(String ns) throws ApiException {
    V1ConfigMap cm =
        core.createNamespacedConfigMap(
                ns, new V1ConfigMap().metadata(new V1ObjectMeta().name("owner")))
            .execute();
    return new V1OwnerReference()
        .apiVersion("v1")
        .kind("ConfigMap")
        .name("owner")
        .uid(cm.getMetadata().getUid())
        .controller(true);
  }

  /** A pod spec shape; call the customizers on a fresh pod. */
  static V1Pod podShape(String ns, String node, String name) {
    V1Pod pod =
        new V1Pod()
            .metadata(
                new V1ObjectMeta()
                    .namespace(ns)
                    .name(name)
                    .labels(new HashMap<>(Map.of(ROLE, name))))
            .spec(
                new V1PodSpec()
                    .nodeName(node)
                    .terminationGracePeriodSeconds(1L)
                    .containers(
                        List.of(new V1Container().name("main").image("fake/" + name + ":1"))));
    // The generated model starts with an empty overhead map, which the API server refuses
    // ("Pod Overhead set without corresponding RuntimeClass").
    pod.getSpec().setOverhead(null);
    return pod;
  }

  static Consumer<V1Pod> ownedBy(V1OwnerReference owner) {
    return p -> p.getMetadata().setOwnerReferences(List.of(owner));
  }

  static Consumer<V1Pod> withEmptyDir() {
    return p ->
        p.getSpec()
            .setVolumes(
                List.of(new V1Volume().name("scratch").emptyDir(new V1EmptyDirVolumeSource())));
  }

  static Consumer<V1Pod> mirror() {
    return p -> p.getMetadata().setAnnotations(Map.of("kubernetes.io/config.mirror", "fake-hash"));
  }

  static Consumer<V1Pod> label(String k, String v) {
    return p -> p.getMetadata().getLabels().put(k, v);
  }

  @SafeVarargs
  final V1Pod pod(String ns, String node, String name, Consumer<V1Pod>... customizers)
      throws ApiException {
    V1Pod p = podShape(ns, node, name);
    for (Consumer<V1Pod> c : customizers) {
      c.accept(p);
    }
    return core.createNamespacedPod(ns, p).execute();
  }

  /**
   * {@code count} pods {@code prefix-i} on {@code node}, created concurrently; waits until all run.
   */
  @SafeVarargs
  final List<String> pods(
      String ns, String node, String prefix, int count, Consumer<V1Pod>... customizers)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<String>> made = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        String name = prefix + "-" + i;
        made.add(pool.submit(() -> pod(ns, node, name, customizers).getMetadata().getName()));
      }
      List<String> names = new ArrayList<>();
      for (Future<String> f : made) {
        names.add(f.get());
      }
      return names;
    } finally {
      pool.shutdownNow();
    }
  }

  /** Waits until {@code count} pods of {@code ns} are Running. */
  void awaitRunning(String ns, int count) {
    Await.until(
        count + " Running pods in " + ns,
        Duration.ofSeconds(120),
        () ->
            core.listNamespacedPod(ns).execute().getItems().stream()
                    .filter(
                        p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
                    .count()
                >= count);
  }

  /** Marks a pod finished, as its kubelet would. */
  void finish(String ns, String name, String phase) throws ApiException {
    PatchUtils.patch(
        V1Pod.class,
        () ->
            core.patchNamespacedPodStatus(
                    name, ns, new V1Patch("{\"status\":{\"phase\":\"" + phase + "\"}}"))
                .buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
        cluster.client());
    Await.until(
        "pod " + ns + "/" + name + " " + phase,
        Duration.ofSeconds(30),
        () -> phase.equals(core.readNamespacedPod(name, ns).execute().getStatus().getPhase()));
  }

  /** A DaemonSet whose single pod runs on {@code node}; waits until it runs. */
  void daemonSet(String ns, String name, String node) throws ApiException {
    Map<String, String> labels = Map.of(ROLE, name, "ds", name);
    apps.createNamespacedDaemonSet(
            ns,
            new V1DaemonSet()
                .metadata(new V1ObjectMeta().name(name))
                .spec(
                    new V1DaemonSetSpec()
                        .selector(new V1LabelSelector().matchLabels(Map.of("ds", name)))
                        .template(
                            new V1PodTemplateSpec()
                                .metadata(new V1ObjectMeta().labels(labels))
                                .spec(
                                    new V1PodSpec()
                                        .overhead(null)
                                        .nodeSelector(Map.of("kubernetes.io/hostname", node))
                                        .terminationGracePeriodSeconds(1L)
                                        .containers(
                                            List.of(
                                                new V1Container()
                                                    .name("main")
                                                    .image("fake/ds:1")))))))
        .execute();
    Await.until(
        "DaemonSet " + ns + "/" + name + " pod Running on " + node,
        Duration.ofSeconds(60),
        () ->
            core.listNamespacedPod(ns).labelSelector("ds=" + name).execute().getItems().stream()
                .anyMatch(
                    p ->
                        node.equals(p.getSpec().getNodeName())
                            && p.getStatus() != null
                            && "Running".equals(p.getStatus().getPhase())));
  }

  /**
   * A policy/v1 budget with an integer minAvailable; waits until the controller-manager computed
   * its status.
   */
  void budget(
      String ns, String name, int minAvailable, Map<String, String> selector, int expectedPods)
      throws ApiException {
    policy
        .createNamespacedPodDisruptionBudget(
            ns,
            new V1PodDisruptionBudget()
                .metadata(new V1ObjectMeta().name(name))
                .spec(
                    new V1PodDisruptionBudgetSpec()
                        .minAvailable(new IntOrString(minAvailable))
                        .selector(new V1LabelSelector().matchLabels(selector))))
        .execute();
    Await.until(
        "PodDisruptionBudget " + ns + "/" + name + " status",
        Duration.ofSeconds(60),
        () -> {
          V1PodDisruptionBudget b = policy.readNamespacedPodDisruptionBudget(name, ns).execute();
          return b.getStatus() != null
              && b.getStatus().getObservedGeneration() != null
              && b.getStatus().getObservedGeneration().equals(b.getMetadata().getGeneration())
              && b.getStatus().getExpectedPods() == expectedPods
              && b.getStatus().getCurrentHealthy() == expectedPods;
        });
  }

  /** Pods bound to {@code node} now, by uid. */
  Map<String, V1Pod> podsOn(String node) throws ApiException {
    Map<String, V1Pod> byUid = new TreeMap<>();
    for (V1Pod p :
        core.listPodForAllNamespaces()
            .fieldSelector("spec.nodeName=" + node)
            .execute()
            .getItems()) {
      byUid.put(p.getMetadata().getUid(), p);
    }
    return byUid;
  }

  static Set<String> roles(Iterable<V1Pod> pods) {
    Set<String> r = new java.util.TreeSet<>();
    for (V1Pod p : pods) {
      r.add(p.getMetadata().getLabels().get(ROLE));
    }
    return r;
  }

  boolean unschedulable(String node) throws ApiException {
    return Boolean.TRUE.equals(core.readNode(node).execute().getSpec().getUnschedulable());
  }

  /** Starts a graceful deletion (which, on a ghost node, never completes). */
  void deleteGracefully(String ns, String name, long graceSeconds) throws ApiException {
    core.deleteNamespacedPod(name, ns)
        .body(new V1DeleteOptions().gracePeriodSeconds(graceSeconds))
        .execute();
  }
}
