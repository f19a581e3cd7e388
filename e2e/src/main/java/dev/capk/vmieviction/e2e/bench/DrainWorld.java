package dev.capk.vmieviction.e2e.bench;

import com.google.common.base.Strings;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The world of the infra drain benchmarks (evacuation, migration, cost): N External VMIs of up to
 * as many tenants as guest clusters (round-robin), on one of two infra nodes of an {@link
 * EvacuationWorld} (the KubeVirt stand-in), and per guest node a Deployment of P pods (namespace:
 * the prefix) pinned to it by nodeSelector. With spares, each tenant has a spare guest node and the
 * pods may run on either (required node affinity): with the spare cordoned they stay on their node
 * and an evicted pod's replacement waits for the node's uncordon; with the spare schedulable the
 * replacement runs there at once, which is what lets a PodDisruptionBudget of maxUnavailable 1
 * allow the next eviction. The controller's guest identity is its own ({@link AuditLog#USER}). A
 * run drains the infra node holding the VMIs; the next run drains the other one.
 */
final class DrainWorld {
  final EvacuationWorld world;
  final LocalCluster infra;
  final RawKube infraApi;
  final List<LocalCluster> guests;
  final int size;
  private final String ns;
  private final int pods;
  private final Map<TenantCluster, List<String>> vms = new LinkedHashMap<>();

  /** Every guest node with a Deployment (the VMs' and plain ones), by guest cluster. */
  private final Map<KubeCluster, List<String>> nodes = new LinkedHashMap<>();

  private final Map<TenantCluster, String> spare = new HashMap<>();
  String holding;
  String other;

  /** Whether a VMI keeps its UID through a run (live migration): recovery then waits for none. */
  boolean keepsUids;

  /** A further condition of a settled world (e.g. no migration unfinished). */
  Callable<Boolean> alsoSettled = () -> true;

  /**
   * One drain and its recovery: times, the VMIs' UIDs before, over that window the controller's
   * CPU, the machine's, every client's requests but WATCHes ({@code apiserver_request_total}) and,
   * when audited, the controller's requests by kind and each VMI's seconds from marking stored to
   * its delete request (the infra audit log).
   */
  record Drained(
      double drainSeconds,
      double recoverySeconds,
      Map<String, String> before,
      double controllerCpuSeconds,
      double machineBusySeconds,
      double infraAll,
      double guestAll,
      List<Double> perVmiSeconds,
      Map<String, Integer> infraCalls,
      Map<String, Integer> guestCalls) {
    @Override
    public String toString() {
      return Report.f(
          "drain %.1f s, recovery %.1f s, controller CPU %.2f s",
          drainSeconds, recoverySeconds, controllerCpuSeconds);
    }
  }

  DrainWorld(
      LocalCluster infra,
      List<LocalCluster> guestClusters,
      String prefix,
      int size,
      int pods,
      boolean spares)
      throws Exception {
    this.infra = infra;
    this.ns = prefix;
    this.size = size;
    this.pods = pods;
    this.infraApi = new RawKube(infra);
    this.world = EvacuationWorld.start(infra, prefix, 2);
    this.holding = world.infraNodes().get(0);
    this.other = world.infraNodes().get(1);
    this.guests = guestClusters.subList(0, Math.min(guestClusters.size(), size));
    for (int k = 0; k < guests.size(); k++) {
      LocalCluster guest = guests.get(k);
      TenantCluster t = world.addTenant("t" + k, guest);
      t.useKubeconfig(guest.kubeconfigFor(AuditLog.USER, "system:masters"));
      if (spares) {
        spare.put(t, prefix + "-t" + k + "-spare");
        guest.kwokNodes().createNamed(spare.get(t), Map.of(TenantCluster.TENANT_LABEL, t.name()));
        Bench.kubectl(guest, "cordon " + spare.get(t));
      }
      List<String> names = new ArrayList<>();
      for (int i = k; i < size; i += guests.size()) {
        names.add(prefix + "-t" + k + "-" + names.size());
      }
      vms.put(t, names);
      world.addVmsOn(holding, t, "External", names.toArray(String[]::new));
      new RawKube(guest).createNamespace(ns, false);
      for (String node : names) {
        deploy(t, node);
      }
    }
    awaitSettled(holding, Map.of(), true, Duration.ofMinutes(5));
  }

  /** Closes the worlds, the stand-in on the infra cluster (the first) and the clusters. */
  static void closeAll(List<DrainWorld> worlds, List<LocalCluster> clusters) {
    worlds.forEach(w -> w.world.close());
    EvacuationWorld.stopStandIn(clusters.get(0));
    clusters.forEach(LocalCluster::close);
  }

  /** The tenants, each with its guest cluster and kubeconfig Secret. */
  java.util.Set<TenantCluster> tenants() {
    return vms.keySet();
  }

  List<String> vmNames() {
    return vms.values().stream().flatMap(List::stream).toList();
  }

  /** A guest node of the first tenant that is no VM, with a VM node's Deployment: a twin. */
  String addPlainNode(String name) throws Exception {
    TenantCluster t = vms.keySet().iterator().next();
    t.guest().kwokNodes().createNamed(name, Map.of(TenantCluster.TENANT_LABEL, t.name()));
    deploy(t, name);
    return name;
  }

  private void deploy(TenantCluster t, String node) throws Exception {
    nodes.computeIfAbsent(t.guest(), g -> new ArrayList<>()).add(node);
    String placement =
        spare.get(t) == null
            ? "\"nodeSelector\":{\"kubernetes.io/hostname\":\"%s\"}".formatted(node)
            : ("\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                    + "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\","
                    + "\"operator\":\"In\",\"values\":[\"%s\",\"%s\"]}]}]}}}")
                .formatted(node, spare.get(t));
    new RawKube(t.guest())
        .post(
            "/apis/apps/v1/namespaces/" + ns + "/deployments",
            """
            {"metadata":{"name":"w-%1$s"},"spec":{"replicas":%2$d,"selector":{"matchLabels":{"app":"w-%1$s"}},
             "template":{"metadata":{"labels":{"app":"w-%1$s"}},"spec":{%3$s,
              "terminationGracePeriodSeconds":1,"containers":[{"name":"main","image":"registry.example/app:1"}]}}}}"""
                .formatted(node, pods, placement));
  }

  /** Creates (then awaits, see below) or removes a budget of maxUnavailable 1 per Deployment. */
  void setBudgets(boolean on) {
    String budget =
        """
        {"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"w-%1$s",
         "namespace":"%2$s"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"w-%1$s"}}}}""";
    nodes.forEach(
        (guest, names) -> {
          if (on) {
            List<String> items = names.stream().map(n -> budget.formatted(n, ns)).toList();
            guest
                .kubectl()
                .apply("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":" + items + "}");
          } else {
            Bench.kubectl(guest, "-n " + ns + " delete pdb --all");
          }
        });
    if (on) {
      awaitBudgetsAllowOne();
    }
  }

  /** Waits until each budget allows one disruption (its pods all run and are counted). */
  private void awaitBudgetsAllowOne() {
    String path = "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets";
    for (Map.Entry<KubeCluster, List<String>> e : nodes.entrySet()) {
      RawKube g = new RawKube(e.getKey());
      Await.until(
          "every budget of " + ns + " allows one disruption",
          Duration.ofMinutes(2),
          () ->
              g.items(path).stream()
                      .filter(b -> "1".equals(RawKube.str(b, "status", "disruptionsAllowed")))
                      .count()
                  == e.getValue().size());
    }
  }

  void spares(boolean schedulable) {
    spare.forEach((t, n) -> Bench.kubectl(t.guest(), (schedulable ? "uncordon " : "cordon ") + n));
  }

  /** After a run with budgets (only) the pods run on the spares: sends them home, awaits it. */
  void returnPodsHome() {
    spares(false);
    String delete = "-n " + ns + " delete pods --grace-period=0 --force --wait=false";
    spare.forEach(
        (t, n) -> Bench.kubectl(t.guest(), delete + " --field-selector=spec.nodeName=" + n));
    awaitSettled(holding, Map.of(), true, Duration.ofMinutes(3));
    awaitBudgetsAllowOne();
  }

  /** {@code path} of every VMI of this world (e.g. its UID), by name. */
  Map<String, String> vmis(String... path) throws Exception {
    Map<String, String> out = new HashMap<>();
    for (JsonObject vmi : vmiObjects()) {
      out.put(RawKube.str(vmi, "metadata", "name"), RawKube.str(vmi, path));
    }
    return out;
  }

  /** This world's VMIs (the infra cluster may hold other worlds'). */
  private List<JsonObject> vmiObjects() throws Exception {
    List<String> mine = vmNames();
    return infraApi.items("/apis/kubevirt.io/v1/virtualmachineinstances").stream()
        .filter(v -> mine.contains(RawKube.str(v, "metadata", "name")))
        .toList();
  }

  /**
   * Waits until every VMI runs on {@code node} (a new one where {@code previous} names a UID), no
   * guest node is cordoned, and every Deployment runs its P pods: on its own guest node when {@code
   * home}, anywhere otherwise.
   */
  private void awaitSettled(
      String node, Map<String, String> previous, boolean home, Duration timeout) {
    Await.until(
        "world " + ns + " settled on " + node,
        timeout,
        () -> vmisBackOn(node, previous) && guestsSettled(home) && alsoSettled.call());
  }

  /**
   * Whether every VMI runs on {@code node}, unmarked and not being deleted, each with another UID
   * than the one {@code previous} (name to UID) names for it, if any.
   */
  private boolean vmisBackOn(String node, Map<String, String> previous) throws Exception {
    return vmiObjects().stream()
            .filter(v -> "Running".equals(RawKube.str(v, "status", "phase")))
            .filter(v -> node.equals(RawKube.str(v, "status", "nodeName")))
            .filter(v -> RawKube.str(v, "metadata", "deletionTimestamp") == null)
            .filter(v -> Strings.isNullOrEmpty(RawKube.str(v, "status", "evacuationNodeName")))
            .filter(
                v ->
                    !RawKube.str(v, "metadata", "uid")
                        .equals(previous.get(RawKube.str(v, "metadata", "name"))))
            .count()
        == vmNames().size();
  }

  /**
   * Whether every guest node is schedulable without our cordon mark and every Deployment runs its P
   * pods (not being deleted): each on its own node when {@code home}, else anywhere.
   */
  private boolean guestsSettled(boolean home) throws Exception {
    for (Map.Entry<KubeCluster, List<String>> e : nodes.entrySet()) {
      RawKube g = new RawKube(e.getKey());
      Map<String, Integer> running = new HashMap<>();
      for (JsonObject p :
          g.items("/api/v1/namespaces/" + ns + "/pods?fieldSelector=status.phase%3DRunning")) {
        if (RawKube.str(p, "metadata", "deletionTimestamp") == null) {
          String app = RawKube.str(p, "metadata", "labels", "app").substring("w-".length());
          running.merge(home ? RawKube.str(p, "spec", "nodeName") : app, 1, Integer::sum);
        }
      }
      for (String name : e.getValue()) {
        JsonObject n = g.getJson("/api/v1/nodes/" + name);
        if ("true".equals(RawKube.str(n, "spec", "unschedulable"))
            || RawKube.str(n, "metadata", "annotations", EvictionAnnotations.CORDONED_BY) != null
            || running.getOrDefault(name, 0) != pods) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The real `kubectl drain` of the infra node holding the VMIs, then the wait until every VM,
   * guest node and pod is back on the other infra node (which the next run drains); measured as
   * {@link Drained} says, by the audit logs in {@code auditDir} unless null. {@code uncordonForIt}:
   * the controller never uncordons guest nodes (the Go original), so the benchmark does once their
   * VMs run again, as a replacement machine's node would come up.
   */
  Drained drain(long controllerPid, boolean uncordonForIt, Path auditDir) throws Exception {
    Map<String, String> before = vmis("metadata", "uid");
    double cpu = ControllerProcess.processCpuSeconds(controllerPid);
    double busy = BenchMain.busyCpuSeconds();
    double infraAll = Metrics.nonWatch(infra);
    double guestAll = guests.stream().mapToDouble(Metrics::nonWatch).sum();
    Instant from = Instant.now();
    long t0 = System.nanoTime();
    Kubectl.Result r = world.drainInfraNode(holding, Duration.ofMinutes(15));
    double drain = Bench.secondsSince(t0);
    if (!r.ok()) {
      throw new IllegalStateException(
          "kubectl drain " + holding + " failed: " + r.stderr() + r.stdout());
    }
    long t1 = System.nanoTime();
    Map<String, String> previous = keepsUids ? Map.of() : before;
    if (uncordonForIt) {
      Await.until(
          "VMs of " + ns + " back on " + other,
          Duration.ofMinutes(5),
          () -> vmisBackOn(other, previous));
      vms.forEach((t, names) -> names.forEach(n -> Bench.kubectl(t.guest(), "uncordon " + n)));
    }
    awaitSettled(other, previous, false, Duration.ofMinutes(5));
    double recovery = Bench.secondsSince(t1);
    Instant to = Instant.now();
    cpu = ControllerProcess.processCpuSeconds(controllerPid) - cpu;
    busy = BenchMain.busyCpuSeconds() - busy;
    infraAll = Metrics.nonWatch(infra) - infraAll;
    guestAll = guests.stream().mapToDouble(Metrics::nonWatch).sum() - guestAll;
    List<Double> perVmi = List.of();
    Map<String, Integer> infraCalls = Map.of();
    Map<String, Integer> guestCalls = Map.of();
    if (auditDir != null) {
      Path log = AuditLog.logOf(auditDir, infra.name());
      Map<String, AuditLog.Evacuation> evacuations = AuditLog.evacuations(log, from, to);
      perVmi =
          vmNames().stream()
              .map(n -> evacuations.getOrDefault(n, AuditLog.Evacuation.NONE).seconds())
              .filter(s -> !Double.isNaN(s))
              .toList();
      infraCalls = AuditLog.count(log, from, to);
      guestCalls = AuditLog.count(auditDir, guests, from, to);
    }
    Bench.kubectl(infra, "uncordon " + holding);
    String h = holding;
    holding = other;
    other = h;
    return new Drained(
        drain, recovery, before, cpu, busy, infraAll, guestAll, perVmi, infraCalls, guestCalls);
  }
}
