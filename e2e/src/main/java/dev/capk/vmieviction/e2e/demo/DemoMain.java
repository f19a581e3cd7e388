package dev.capk.vmieviction.e2e.demo;

import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * `make demo`: the controller's main job on local clusters. An infra cluster with three kwok nodes
 * and two tenant clusters whose VMs run on it; an admin drains infra node 0 with the real kubectl;
 * the controller drains each tenant's guest node first, honouring its PodDisruptionBudget, then
 * lets the VM go; the KubeVirt stand-in restarts it on another node. Everything is stopped at the
 * end.
 */
public final class DemoMain {
  private DemoMain() {}

  public static void main(String[] args) throws Exception {
    Duration drainTimeout = Duration.ofMinutes(2);
    System.out.println(
        "== Starting an infra cluster and two tenant clusters (real etcd, kube-apiserver,");
    System.out.println("   kube-controller-manager, kube-scheduler; kwok plays the kubelets) ...");
    try (LocalCluster infra = LocalCluster.builder("demo-infra").withAll().start();
        LocalCluster guestA = LocalCluster.builder("demo-tenant-a").withAll().start();
        LocalCluster guestB = LocalCluster.builder("demo-tenant-b").withAll().start()) {
      System.out.println(
          "== Creating tenants: Cluster API Clusters, kubeconfig Secrets, VMs (KubeVirt stand-in), workloads with PDBs");
      EvacuationWorld world = EvacuationWorld.start(infra, "demo", 3);
      String node = world.infraNodes().get(0);
      TenantCluster a = world.addTenant("tenant-a", guestA);
      TenantCluster b = world.addTenant("tenant-b", guestB);
      world.addVmsOn(node, a, "External", "tenant-a-md-0", "tenant-a-md-1");
      // Two of tenant-a's control-plane machines on the drained node: the quorum guard lets one
      // go at a time, the other is held until the first is back.
      world.addVmsOn(node, a, "External", true, "tenant-a-cp-0", "tenant-a-cp-1");
      world.addVmsOn(world.infraNodes().get(1), a, "External", "tenant-a-md-2");
      world.addVmsOn(node, b, "External", "tenant-b-md-0");
      world.addVmsOn(world.infraNodes().get(2), b, "External", "tenant-b-md-1");
      a.deployProtectedWorkload("shop", "web", 6, 4);
      b.deployProtectedWorkload("data", "db", 4, 3);
      a.awaitAvailable("shop", "web", 6);
      b.awaitAvailable("data", "db", 4);
      System.out.println(
          "   tenant-a: Deployment shop/web, 6 replicas, PodDisruptionBudget minAvailable=4");
      System.out.println(
          "   tenant-b: Deployment data/db,  4 replicas, PodDisruptionBudget minAvailable=3");
      System.out.println("   infra kubeconfig: " + infra.kubeconfig());

      List<String> flags =
          new ArrayList<>(
              List.of(
                  "--kubeconfig=" + infra.kubeconfig(),
                  "--drain-timeout=" + drainTimeout.toSeconds() + "s",
                  // Below the drain timeout, so a held control-plane VMI waits for its turn.
                  "--drain-reserve=30s"));
      flags.addAll(world.controllerNamespaceFlags());
      try (ControllerProcess controller = ControllerProcess.start("demo", infra.dir(), flags);
          InvariantRecorder recorder = new InvariantRecorder(infra, world.tenants());
          Narrator narrator = new Narrator(infra.client(), world.tenants())) {
        System.out.println(
            "== Controller running (PID " + controller.pid() + ", log " + controller.log() + ")");
        recorder.startTrackingAvailability();
        narrator.start();
        Thread.sleep(1000);
        narrator.say(
            "admin",
            "kubectl drain " + node + " --ignore-daemonsets --delete-emptydir-data --force");
        long began = System.nanoTime();
        Kubectl.Result drain = world.drainInfraNode(node, Duration.ofMinutes(5));
        long tookMs = (System.nanoTime() - began) / 1_000_000;
        narrator.say(
            "admin",
            drain.ok()
                ? "kubectl drain finished: " + lastLine(drain.stdout())
                : "kubectl drain FAILED: " + drain.stderr().strip());
        Thread.sleep(5000);
        narrator.close();
        System.out.println();
        System.out.println("== Result");
        System.out.printf(
            "   infra node drain took %.1f s (deadline per VM %d s)%n",
            tookMs / 1000.0, drainTimeout.toSeconds());
        System.out.printf(
            "   fewest available pods during the drain: tenant-a web %d (budget 4), tenant-b db %d (budget 3)%n",
            recorder.minAvailable(a, "shop", "web"), recorder.minAvailable(b, "data", "db"));
        System.out.println("   Warning events on VMIs: " + warnings(infra, world));
        if (!drain.ok()) {
          System.exit(1);
        }
      } finally {
        world.close();
        EvacuationWorld.stopStandIn(infra);
      }
      System.out.println("== Stopping the clusters");
    }
  }

  private static String warnings(LocalCluster infra, EvacuationWorld world) {
    int count = 0;
    for (TenantCluster t : world.tenants()) {
      String out =
          infra
              .kubectl()
              .run(
                  null,
                  Duration.ofSeconds(10),
                  "-n",
                  t.namespace(),
                  "get",
                  "events",
                  "--field-selector",
                  "type=Warning",
                  "-o",
                  "name")
              .stdout();
      count += (int) out.lines().filter(l -> !l.isBlank()).count();
    }
    return count == 0 ? "none" : count + " (see kubectl get events)";
  }

  private static String lastLine(String text) {
    List<String> lines = text.strip().lines().toList();
    return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
  }
}
