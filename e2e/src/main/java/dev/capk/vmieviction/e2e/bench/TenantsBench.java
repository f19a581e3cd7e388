package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/** Benchmark 11 (issue 31): N tenant Clusters of one VMI each, all marked at once. */
final class TenantsBench extends Bench {
  /** The tenants' guest identities' group, bound to cluster-admin in each guest cluster. */
  static final String GROUP = "capk-bench-tenants";

  static final String INFRA_NODE = "tn-infra-0";
  static final String SPARE = "tn-spare";

  /** The guest namespace of the workloads. */
  static final String NS = "tn";

  /** The controller's --drain-timeout default (not passed): each evacuation's deadline. */
  static final double DEADLINE_SECONDS = 600;

  private final List<Run> runs = new ArrayList<>();

  /** One world of {@code tenants}: what the controller did with it (requests per evacuation). */
  record Run(
      int tenants,
      double startupSeconds,
      double lastDeleteSeconds,
      int deleted,
      int pastDeadline,
      int peakThreads,
      int threadsAtMark,
      long peakRssKb,
      double cpuPerEvac,
      double infra,
      double infraEvents,
      double guestNone,
      double guestBudget,
      double guestEvents) {}

  @Override
  void run() throws Exception {
    int n = Integer.getInteger("bench.tenants.count", 1000);
    int guests = Integer.getInteger("bench.tenants.guests", 2);
    int pods = Integer.getInteger("bench.tenants.pods", 2);
    String load = BenchMain.loadAverage();
    try {
      for (int count : new TreeSet<>(List.of(Math.min(100, n), n))) {
        runs.add(world(count, guests, pods));
        progress("tenants: %s", runs.get(runs.size() - 1));
      }
    } finally {
      write(guests, pods, load);
    }
  }

  private Run world(int n, int guestCount, int pods) throws Exception {
    String name = "bench-tenants-" + n;
    String guestRule = "- level: Metadata\n  userGroups: [\"" + GROUP + "\"]\n";
    List<LocalCluster.Builder> builders = new ArrayList<>();
    for (int k = -1; k < guestCount; k++) {
      String c = name + (k < 0 ? "-infra" : "-guest-" + k);
      // The infra API server alone: a garbage collector would delete VMIs whose VM is absent.
      LocalCluster.Builder b = k < 0 ? LocalCluster.builder(c) : LocalCluster.builder(c).withAll();
      String rules = k < 0 ? AuditLog.CONTROLLER_RULE + AuditLog.INFRA_RULES : guestRule;
      AuditLog.apiServerFlags(auditDir(), c, rules).forEach(b::apiServerFlag);
      builders.add(b);
    }
    progress("tenants: %d tenants on an infra and %d guest API servers", n, guestCount);
    List<LocalCluster> clusters = startAll(builders);
    try {
      LocalCluster infra = clusters.get(0);
      List<LocalCluster> guests = clusters.subList(1, clusters.size());
      Crds.installTestCrds(infra);
      RawKube infraApi = new RawKube(infra);
      for (LocalCluster g : guests) {
        RawKube api = new RawKube(g);
        api.post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            """
            {"metadata":{"name":"%1$s"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io",
             "kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"Group",
             "apiGroup":"rbac.authorization.k8s.io","name":"%1$s"}]}"""
                .formatted(GROUP));
        api.createNamespace(NS, false);
        g.kwokNodes().createNamed(SPARE, Map.of());
        spare(api, true);
      }
      long t0 = System.nanoTime();
      // Tenants 2j and 2j+1 (no budget, budget) share guest cluster j mod G: each serves both.
      IntFunction<LocalCluster> guestOf = k -> guests.get(k / 2 % guestCount);
      parallel(n, 16, k -> tenant(infraApi, guestOf.apply(k), k, pods));
      progress("tenants: %d tenants created in %.0f s", n, secondsSince(t0));
      for (LocalCluster g : guests) {
        RawKube api = new RawKube(g);
        int here = (int) IntStream.range(0, n).filter(k -> guestOf.apply(k) == g).count();
        long budgets =
            IntStream.range(0, n).filter(k -> k % 2 == 1 && guestOf.apply(k) == g).count();
        String running = "/api/v1/namespaces/" + NS + "/pods?fieldSelector=status.phase%3DRunning";
        Await.until(
            here * pods + " pods running in " + g.name(),
            Duration.ofMinutes(10),
            () -> api.items(running).size() == here * pods);
        // The spare takes the replacements, which lets a budget of maxUnavailable 1 allow the next.
        spare(api, false);
        String pdbs = "/apis/policy/v1/namespaces/" + NS + "/poddisruptionbudgets";
        Await.until(
            "every budget in " + g.name() + " allows one disruption",
            Duration.ofMinutes(5),
            () ->
                api.items(pdbs).stream()
                        .filter(b -> "1".equals(RawKube.str(b, "status", "disruptionsAllowed")))
                        .count()
                    == budgets);
      }
      return measure(n, infra, infraApi, guests, clusters);
    } finally {
      clusters.forEach(LocalCluster::close);
    }
  }

  private static void spare(RawKube api, boolean cordoned) throws Exception {
    api.mergePatch("/api/v1/nodes/" + SPARE, "{\"spec\":{\"unschedulable\":" + cordoned + "}}");
  }

  static String vmi(int k) {
    return "tn-" + k + "-md-0";
  }

  /**
   * Tenant k: in the infra cluster its namespace, Cluster, kubeconfig Secret (its own identity),
   * Machine, KubevirtMachine and one Running VMI; in its guest cluster the node named like the VMI
   * and a Deployment of {@code pods} pods on it (or the spare), under a budget for odd k.
   */
  private void tenant(RawKube infra, LocalCluster guest, int k, int pods) throws Exception {
    String ns = "tn-" + k;
    String vmi = vmi(k);
    String kubeconfig = guest.kubeconfigFor(AuditLog.USER + "-t" + k, GROUP);
    infra.post("/api/v1/namespaces", "{\"metadata\":{\"name\":\"" + ns + "\"}}");
    String capi = "/apis/cluster.x-k8s.io/v1beta1/namespaces/" + ns;
    String labels = "\"labels\":{\"cluster.x-k8s.io/cluster-name\":\"" + ns + "\"}";
    infra.post(
        capi + "/clusters",
        """
        {"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"%1$s"},
         "spec":{"infrastructureRef":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1",
          "kind":"KubevirtCluster","name":"%1$s"}}}"""
            .formatted(ns));
    infra.post(
        "/api/v1/namespaces/" + ns + "/secrets",
        """
        {"metadata":{"name":"%s-kubeconfig",%s},"type":"cluster.x-k8s.io/secret","data":{"value":"%s"}}"""
            .formatted(
                ns,
                labels,
                Base64.getEncoder().encodeToString(kubeconfig.getBytes(StandardCharsets.UTF_8))));
    String machine =
        infra.post(
            capi + "/machines",
            "{\"apiVersion\":\"cluster.x-k8s.io/v1beta1\",\"kind\":\"Machine\",\"metadata\":{\"name\":\"%s\",%s},\"spec\":{\"clusterName\":\"%s\"}}"
                .formatted(vmi, labels, ns));
    infra.post(
        "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/" + ns + "/kubevirtmachines",
        """
        {"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1","kind":"KubevirtMachine",
         "metadata":{"name":"%1$s",%2$s,"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta1",
         "kind":"Machine","name":"%1$s","uid":"%3$s"}]}}"""
            .formatted(vmi, labels, RawKube.str(machine, "metadata", "uid")));
    String ip = "10.244." + (k / 250 % 250) + "." + (k % 250 + 2);
    RealisticVmis.create(infra, ns, vmi, ns, INFRA_NODE, ip);
    guest.kwokNodes().createNamed(vmi, Map.of(TenantCluster.TENANT_LABEL, ns));
    RawKube api = new RawKube(guest);
    api.post(
        "/apis/apps/v1/namespaces/" + NS + "/deployments",
        """
        {"metadata":{"name":"w-%1$s"},"spec":{"replicas":%2$d,"selector":{"matchLabels":{"app":"w-%1$s"}},
         "template":{"metadata":{"labels":{"app":"w-%1$s"}},"spec":{"affinity":{"nodeAffinity":{
          "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[
          {"key":"kubernetes.io/hostname","operator":"In","values":["%1$s","%3$s"]}]}]}}},
          "terminationGracePeriodSeconds":1,"containers":[{"name":"main","image":"registry.example/app:1"}]}}}}"""
            .formatted(vmi, pods, SPARE));
    if (k % 2 == 1) {
      api.post(
          "/apis/policy/v1/namespaces/" + NS + "/poddisruptionbudgets",
          """
          {"metadata":{"name":"w-%1$s"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"w-%1$s"}}}}"""
              .formatted(vmi));
    }
  }

  /**
   * Starts the controller, waits out its start-up wave, marks every VMI at once (32 requests in
   * flight) and waits until each is deleted (at most the deadline and 90 s), sampling its threads.
   */
  private Run measure(
      int n,
      LocalCluster infra,
      RawKube infraApi,
      List<LocalCluster> guests,
      List<LocalCluster> all)
      throws Exception {
    Path kubeconfig =
        AuditLog.controllerKubeconfig(infra, work.resolve("controller-infra-" + n + ".kubeconfig"));
    List<String> flags = List.of("--kubeconfig=" + kubeconfig);
    AtomicInteger peak = new AtomicInteger();
    try (ControllerProcess c =
            ControllerJar.start("tenants-" + n, work, flags, Duration.ofMinutes(5));
        AutoCloseable s = sampling(100, () -> peak.accumulateAndGet(threads(c.pid()), Math::max))) {
      AuditLog.awaitQuiet(auditDir(), all);
      int atMark = threads(c.pid());
      double cpu = ControllerProcess.processCpuSeconds(c.pid());
      Map<String, Long> deletedAt = new ConcurrentHashMap<>();
      Instant from = Instant.now();
      try (AutoCloseable w =
          infraApi.watchResuming(
              "/apis/kubevirt.io/v1/virtualmachineinstances",
              RawKube::deleted,
              deletedAt,
              () -> {})) {
        progress("tenants: marking %d VMIs", n);
        parallel(n, 32, k -> RealisticVmis.mark(infraApi, "tn-" + k, vmi(k), INFRA_NODE));
        long t0 = System.nanoTime();
        while (deletedAt.size() < n && secondsSince(t0) < DEADLINE_SECONDS + 90) {
          Thread.sleep(1000);
        }
      }
      AuditLog.awaitQuiet(auditDir(), all);
      Instant to = Instant.now();
      cpu = ControllerProcess.processCpuSeconds(c.pid()) - cpu;
      Path log = AuditLog.logOf(auditDir(), infra.name());
      List<AuditLog.Evacuation> evacuations =
          List.copyOf(AuditLog.evacuations(log, from, to).values());
      double last =
          evacuations.stream()
              .mapToDouble(AuditLog.Evacuation::deleteRequested)
              .filter(d -> !Double.isNaN(d))
              .max()
              .orElse(Double.NaN);
      Map<String, Integer> infraCalls = AuditLog.count(log, from, to);
      double[] guest = guestCalls(guests, from, to);
      return new Run(
          n,
          c.startupMs() / 1000,
          last - AuditLog.epoch(from),
          (int) evacuations.stream().filter(e -> !Double.isNaN(e.deleteRequested())).count(),
          (int) evacuations.stream().filter(e -> !(e.seconds() <= DEADLINE_SECONDS)).count()
              + n
              - evacuations.size(),
          peak.get(),
          atMark,
          ControllerProcess.procStatus(c.pid(), "VmHWM:"),
          cpu / n,
          events(infraCalls, false) / n,
          events(infraCalls, true) / n,
          guest[0] / ((n + 1) / 2),
          guest[1] / (n / 2),
          guest[2] / n);
    }
  }

  private static double events(Map<String, Integer> calls, boolean events) {
    return calls.entrySet().stream()
        .filter(e -> e.getKey().endsWith(" events") == events)
        .mapToInt(Map.Entry::getValue)
        .sum();
  }

  /**
   * The tenants' guest requests but WATCHes in [from, to): of the tenants without a budget (even),
   * with one (odd), and on Events (all tenants).
   */
  private double[] guestCalls(List<LocalCluster> guests, Instant from, Instant to) {
    double[] out = new double[3];
    String prefix = AuditLog.USER + "-t";
    for (LocalCluster g : guests) {
      for (AuditLog.Entry e : AuditLog.entries(AuditLog.logOf(auditDir(), g.name()))) {
        if (e.verb().equals("watch") || e.user() == null || !e.user().startsWith(prefix)) {
          continue;
        }
        if (e.within(from, to)) {
          int k = Integer.parseInt(e.user().substring(prefix.length()));
          out["events".equals(e.resource()) ? 2 : k % 2]++;
        }
      }
    }
    return out;
  }

  private static int threads(long pid) {
    return (int) ControllerProcess.procStatus(pid, "Threads:");
  }

  private void write(int guests, int pods, String load) {
    // The 10-VMI cost figures (docs/benchmarks.md, section 9): infra 2.0; a guest node of P pods
    // without a budget P evictions, a pod list and two node patches, plus 0.2 of discovery.
    double refInfra = Double.parseDouble(System.getProperty("bench.tenants.refInfra", "2.0"));
    double refGuest =
        Double.parseDouble(System.getProperty("bench.tenants.refGuest", "" + (pods + 3.2)));
    List<List<String>> rows = new ArrayList<>();
    for (Run r : runs) {
      rows.add(
          Report.row(
              r.tenants(),
              Report.f("%.1f", r.startupSeconds()),
              Report.f("%.1f", r.lastDeleteSeconds()),
              r.deleted() + " / " + r.tenants(),
              r.pastDeadline(),
              r.threadsAtMark() + " / " + r.peakThreads(),
              r.peakRssKb() / 1024,
              Report.f("%.3f", r.cpuPerEvac()),
              Report.f("%.2f / %.2f", r.infra(), r.infraEvents()),
              Report.f("%.2f / %.2f / %.2f", r.guestNone(), r.guestBudget(), r.guestEvents())));
    }
    if (runs.size() == 2) {
      Run a = runs.get(0);
      Run b = runs.get(1);
      rows.add(
          Report.row(
              "growth ×" + b.tenants() / a.tenants(),
              "×" + Report.f("%.2f", b.startupSeconds() / a.startupSeconds()),
              "×" + Report.f("%.2f", b.lastDeleteSeconds() / a.lastDeleteSeconds()),
              "",
              "",
              "×" + Report.f("%.2f", (double) b.peakThreads() / a.peakThreads()),
              "×" + Report.f("%.2f", (double) b.peakRssKb() / a.peakRssKb()),
              "×" + Report.f("%.2f", b.cpuPerEvac() / a.cpuPerEvac()),
              "",
              ""));
    }
    if (!runs.isEmpty()) {
      Run r = runs.get(runs.size() - 1);
      int n = r.tenants();
      String what = Report.f("11. %,d tenants at once: ", r.tenants());
      report.atMost(what + "peak threads", "%.0f", r.peakThreads(), "≤ 100", 100);
      report.atMost(what + "peak RSS", "%.0f MiB", r.peakRssKb() / 1024.0, "≤ 350 MiB", 350);
      // Per marked VMI; a figure per evacuation only when every evacuation completed.
      boolean all = r.deleted() == r.tenants();
      String partial = all ? "" : Report.f(" per marked VMI (%d of %d deleted)", r.deleted(), n);
      report.verdict(
          what + "infra requests / evac.",
          Report.f("%.2f", r.infra()) + partial,
          Report.f("≤ 10-VMI cost %.1f + 10%%", refInfra),
          all ? r.infra() <= refInfra * 1.1 : null);
      report.verdict(
          what + "guest requests / evac., no budget",
          Report.f("%.2f", r.guestNone()) + partial,
          Report.f("≤ 10-VMI cost at P=%d, %.1f, + 10%%", pods, refGuest),
          all ? r.guestNone() <= refGuest * 1.1 : null);
      report.verdict(
          what + "evacuations past their deadline",
          r.pastDeadline() + " (deleted " + r.deleted() + " / " + r.tenants() + ")",
          "none",
          r.pastDeadline() == 0 && r.deleted() == r.tenants());
    }
    report.section(
        Report.f(
                "## 11. Tenants at once\n\n"
                    + "N tenant Clusters on one infra API server, each with one Running VMI, its own kubeconfig "
                    + "Secret and guest identity (a client certificate of user `%s-tK`, group `%s` bound to "
                    + "cluster-admin), served by %d guest API servers (kwok); per guest node a Deployment of %d "
                    + "pods (which may also run on a spare node of its guest cluster, cordoned until the run), "
                    + "a budget of maxUnavailable 1 for odd tenants, none for even ones. Every VMI marked at once "
                    + "(`status.evacuationNodeName`, 32 requests in flight), after the controller's start-up wave "
                    + "went quiet. The controller: `%s`, default flags (16 workers, --drain-timeout 10m). "
                    + "Threads: `/proc/PID/status` every 100 ms from /readyz on (at the marking / peak). RSS: "
                    + "VmHWM (the process's peak). Time to the last delete request from the first marking; "
                    + "requests from the audit logs, WATCH excluded, and CPU, from the marking until the logs went quiet after the last deletion or the wait's end (the deadline and 90 s), divided by the VMIs marked. Load average at the start "
                    + "%s, at the end %s.\n\n",
                AuditLog.USER,
                GROUP,
                guests,
                pods,
                ControllerJar.describeDeployed(),
                load,
                BenchMain.loadAverage())
            + Report.table(
                "tenants|start-up s|to last deletion s|deleted|past deadline|threads at marking / peak"
                    + "|peak RSS MiB|CPU s / marked VMI|infra requests / Events, per marked VMI"
                    + "|guest requests no budget / budget / Events, per marked VMI",
                rows));
  }
}
