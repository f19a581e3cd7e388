package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
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
import java.util.TreeMap;

/**
 * The cost benchmark's world: N External VMIs of up to as many tenants as guest clusters on one of
 * two infra nodes, and per guest node a Deployment of P pods that may run on that node or on its
 * tenant's spare guest node (required node affinity). With the spare cordoned the pods stay on
 * their node and an evicted pod's replacement waits for the node's uncordon; with the spare
 * schedulable the replacement runs there at once, which is what lets a PodDisruptionBudget of
 * maxUnavailable 1 allow the next eviction.
 */
final class CostWorld {
  final EvacuationWorld world;
  final LocalCluster infra;
  final List<LocalCluster> guests = new ArrayList<>();
  private final String ns;
  private final int pods;
  private final RawKube infraApi;
  private final List<TenantCluster> tenants = new ArrayList<>();
  private final Map<TenantCluster, List<String>> vms = new LinkedHashMap<>();
  private final Map<TenantCluster, LocalCluster> guestOf = new HashMap<>();
  private final Map<TenantCluster, String> spare = new HashMap<>();
  private final List<String> plainNodes = new ArrayList<>();
  private boolean budgets;
  String holding;
  String other;

  /**
   * What one run cost the controller, and how long it took; per VMI: from its marking stored to the
   * controller's delete request, the infra API server's own times (its audit log).
   */
  record Outcome(
      double drainSeconds,
      double recoverySeconds,
      List<Double> perVmiSeconds,
      Map<String, Integer> infraCalls,
      Map<String, Integer> guestCalls,
      double cpuSeconds) {}

  CostWorld(LocalCluster infra, List<LocalCluster> guestClusters, String prefix, int size, int pods)
      throws Exception {
    this.infra = infra;
    this.ns = prefix;
    this.pods = pods;
    this.infraApi = new RawKube(infra);
    this.world = EvacuationWorld.start(infra, prefix, 2);
    this.holding = world.infraNodes().get(0);
    this.other = world.infraNodes().get(1);
    int tenantCount = Math.min(guestClusters.size(), size);
    for (int k = 0; k < tenantCount; k++) {
      LocalCluster guest = guestClusters.get(k);
      TenantCluster t = world.addTenant("t" + k, guest);
      ControllerIdentity.useInGuest(t, guest);
      tenants.add(t);
      guests.add(guest);
      guestOf.put(t, guest);
      String spareNode =
          guest
              .kwokNodes()
              .createNamed(
                  prefix + "-t" + k + "-spare", Map.of(TenantCluster.TENANT_LABEL, t.name()));
      guest.kubectl().runOrFail(null, "cordon", spareNode);
      spare.put(t, spareNode);
      List<String> names = new ArrayList<>();
      for (int i = k; i < size; i += tenantCount) {
        names.add(prefix + "-t" + k + "-" + names.size());
      }
      vms.put(t, names);
      world.addVmsOn(holding, t, "External", names.toArray(String[]::new));
      new RawKube(guest).createNamespace(ns);
      for (String node : names) {
        deploy(guest, node, spareNode);
      }
    }
  }

  List<String> vmNames() {
    return vms.values().stream().flatMap(List::stream).toList();
  }

  /**
   * A guest node of the first tenant that is no VM, with the same Deployment as a VM's guest node:
   * the twin that `kubectl drain` drains.
   */
  String addPlainNode(String name) throws Exception {
    TenantCluster t = tenants.get(0);
    LocalCluster guest = guestOf.get(t);
    guest.kwokNodes().createNamed(name, Map.of(TenantCluster.TENANT_LABEL, t.name()));
    deploy(guest, name, spare.get(t));
    plainNodes.add(name);
    return name;
  }

  private void deploy(LocalCluster guest, String node, String spareNode) throws Exception {
    new RawKube(guest)
        .post(
            "/apis/apps/v1/namespaces/" + ns + "/deployments",
            """
            {"metadata":{"name":"w-%1$s"},"spec":{"replicas":%2$d,"selector":{"matchLabels":{"app":"w-%1$s"}},
             "template":{"metadata":{"labels":{"app":"w-%1$s"}},"spec":{
              "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
               {"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["%1$s","%3$s"]}]}]}}},
              "terminationGracePeriodSeconds":1,"containers":[{"name":"main","image":"registry.example/app:1"}]}}}}"""
                .formatted(node, pods, spareNode));
  }

  /** Every guest node of the world (VMs' and plain), by the guest cluster that has it. */
  private Map<LocalCluster, List<String>> nodesByGuest() {
    Map<LocalCluster, List<String>> out = new LinkedHashMap<>();
    for (TenantCluster t : tenants) {
      out.computeIfAbsent(guestOf.get(t), g -> new ArrayList<>()).addAll(vms.get(t));
    }
    if (!plainNodes.isEmpty()) {
      out.computeIfAbsent(guestOf.get(tenants.get(0)), g -> new ArrayList<>()).addAll(plainNodes);
    }
    return out;
  }

  /**
   * Creates (or removes) a PodDisruptionBudget of maxUnavailable 1 per Deployment, and waits until
   * each created budget allows one disruption.
   */
  void setBudgets(boolean on) throws Exception {
    for (Map.Entry<LocalCluster, List<String>> e : nodesByGuest().entrySet()) {
      Kubectl k = e.getKey().kubectl();
      if (!on) {
        k.runOrFail(null, "-n", ns, "delete", "pdb", "--all", "--ignore-not-found");
        continue;
      }
      StringBuilder yaml = new StringBuilder();
      for (String node : e.getValue()) {
        yaml.append(
            """
            ---
            apiVersion: policy/v1
            kind: PodDisruptionBudget
            metadata: {name: w-%1$s, namespace: %2$s}
            spec:
              maxUnavailable: 1
              selector: {matchLabels: {app: w-%1$s}}
            """
                .formatted(node, ns));
      }
      k.apply(yaml.toString());
    }
    budgets = on;
    awaitBudgetsAllowOne();
  }

  /** With budgets: waits until each allows one disruption (its pods all run and are counted). */
  private void awaitBudgetsAllowOne() {
    if (!budgets) {
      return;
    }
    for (Map.Entry<LocalCluster, List<String>> e : nodesByGuest().entrySet()) {
      RawKube api = new RawKube(e.getKey());
      Await.until(
          "every budget of " + ns + " allows one disruption",
          Duration.ofMinutes(2),
          () -> {
            int allowing = 0;
            for (JsonElement b :
                api.getJson("/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets")
                    .getAsJsonArray("items")) {
              JsonObject status = b.getAsJsonObject().getAsJsonObject("status");
              if (status != null
                  && status.has("disruptionsAllowed")
                  && status.get("disruptionsAllowed").getAsInt() == 1) {
                allowing++;
              }
            }
            return allowing == e.getValue().size();
          });
    }
  }

  /** Makes the tenants' spare guest nodes schedulable, or cordons them. */
  void spares(boolean schedulable) {
    for (TenantCluster t : tenants) {
      guestOf.get(t).kubectl().runOrFail(null, schedulable ? "uncordon" : "cordon", spare.get(t));
    }
  }

  /**
   * After a run with budgets the pods run on the spares: cordons them, deletes their pods, and
   * waits until every Deployment runs on its own guest node again.
   */
  void returnPodsHome() throws Exception {
    spares(false);
    for (TenantCluster t : tenants) {
      guestOf
          .get(t)
          .kubectl()
          .runOrFail(
              null,
              "-n",
              ns,
              "delete",
              "pods",
              "--field-selector=spec.nodeName=" + spare.get(t),
              "--grace-period=0",
              "--force",
              "--wait=false");
    }
    awaitSettled(holding, Map.of(), true, Duration.ofMinutes(3));
    awaitBudgetsAllowOne();
  }

  /** UID of every VMI of this world, by namespace/name. */
  Map<String, String> uids() throws Exception {
    Map<String, String> out = new HashMap<>();
    for (TenantCluster t : tenants) {
      for (JsonElement e : infraApi.getJson(vmiPath(t)).getAsJsonArray("items")) {
        JsonObject vmi = e.getAsJsonObject();
        out.put(
            t.namespace() + "/" + RawKube.str(vmi, "metadata", "name"),
            RawKube.str(vmi, "metadata", "uid"));
      }
    }
    return out;
  }

  private static String vmiPath(TenantCluster t) {
    return "/apis/kubevirt.io/v1/namespaces/" + t.namespace() + "/virtualmachineinstances";
  }

  /**
   * Waits until every VMI runs on {@code node} (a new one where {@code previous} names a UID), no
   * guest node is cordoned, and every Deployment runs its P pods: on its own guest node when {@code
   * home}, anywhere otherwise.
   */
  void awaitSettled(String node, Map<String, String> previous, boolean home, Duration timeout) {
    Await.until(
        "cost world " + ns + " settled on " + node,
        timeout,
        () -> vmisBackOn(node, previous) && guestsSettled(home));
  }

  private boolean vmisBackOn(String node, Map<String, String> previous) throws Exception {
    for (TenantCluster t : tenants) {
      if (WorldChecks.vmisRunningOn(infraApi, t.namespace(), node, previous) != vms.get(t).size()) {
        return false;
      }
    }
    return true;
  }

  private boolean guestsSettled(boolean home) throws Exception {
    for (Map.Entry<LocalCluster, List<String>> e : nodesByGuest().entrySet()) {
      RawKube g = new RawKube(e.getKey());
      if (!WorldChecks.schedulable(g, e.getValue())) {
        return false;
      }
      // Home: each Deployment's pods on its own node; else wherever they run (the spare).
      Map<String, Integer> running =
          WorldChecks.runningPods(
              g,
              ns,
              home
                  ? WorldChecks::nodeOf
                  : p -> RawKube.str(p, "metadata", "labels", "app").substring("w-".length()));
      if (!WorldChecks.eachHas(running, e.getValue(), pods)) {
        return false;
      }
    }
    return true;
  }

  /**
   * One timed infra drain of the node holding the VMIs, until every VM, guest node and pod is back
   * (on the other infra node); counts the controller's requests and CPU over that window. {@code
   * uncordonForIt}: the controller never uncordons guest nodes (the Go original), so the benchmark
   * does once their VMs run again, as a replacement machine's node would come up.
   */
  Outcome runOnce(
      long controllerPid,
      boolean uncordonForIt,
      Path auditDir,
      LocalCluster infraCluster,
      List<LocalCluster> auditedGuests)
      throws Exception {
    Map<String, String> before = uids();
    double cpuBefore = Machine.processCpuSeconds(controllerPid);
    Instant from = Instant.now();
    long t0 = System.nanoTime();
    Kubectl.Result r = world.drainInfraNode(holding, Duration.ofMinutes(15));
    double drain = (System.nanoTime() - t0) / 1e9;
    if (!r.ok()) {
      throw new IllegalStateException(
          "kubectl drain " + holding + " failed: " + r.stderr() + r.stdout());
    }
    long t1 = System.nanoTime();
    if (uncordonForIt) {
      Await.until(
          "VMs of " + ns + " back on " + other,
          Duration.ofMinutes(5),
          () -> vmisBackOn(other, before));
      for (TenantCluster t : tenants) {
        for (String node : vms.get(t)) {
          guestOf.get(t).kubectl().runOrFail(null, "uncordon", node);
        }
      }
    }
    awaitSettled(other, before, false, Duration.ofMinutes(5));
    double recovery = (System.nanoTime() - t1) / 1e9;
    double cpu = Machine.processCpuSeconds(controllerPid) - cpuBefore;
    Instant to = Instant.now();
    Path infraLog = AuditLog.logOf(auditDir, infraCluster.name());
    Map<String, Integer> infraCalls = AuditLog.count(infraLog, from, to);
    List<Double> perVmi = new ArrayList<>();
    for (String vmi : vmNames()) {
      ServerTimes.evacuationSeconds(infraLog, vmi, from, to).ifPresent(perVmi::add);
    }
    Map<String, Integer> guestCalls = new TreeMap<>();
    for (LocalCluster g : auditedGuests) {
      AuditLog.count(AuditLog.logOf(auditDir, g.name()), from, to)
          .forEach((k, v) -> guestCalls.merge(k, v, Integer::sum));
    }
    infra.kubectl().runOrFail(null, "uncordon", holding);
    String h = holding;
    holding = other;
    other = h;
    return new Outcome(drain, recovery, perVmi, infraCalls, guestCalls, cpu);
  }
}
