package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Benchmarks 2 and 5. One infra cluster (with the KubeVirt stand-in from the e2e suite) and five
 * guest clusters. For each size N (1, 10, 50 External VMIs) a world of two infra nodes A and B: the
 * N VMIs run on A, spread over up to five tenants (one guest cluster each), each guest node
 * carrying its own Deployment of P pods pinned to it (nodeSelector), without a PodDisruptionBudget
 * (see {@link #write}). A run is the real `kubectl drain` of the node holding the VMIs: KubeVirt
 * (stand-in) refuses each launcher eviction and marks the VMI, the controller drains each guest
 * node and deletes the VMI, the VM comes back on the other node, the guest node is uncordoned and
 * the pinned pods return. The next run drains the other node. The controller runs from its jar,
 * with default workers and with --workers=1, and with its own client identity, so that the API
 * servers' audit logs attribute its requests (benchmark 5).
 */
final class EvacuationBench {
  private final Report report;
  private final BenchOptions opts;
  private final Path work;
  private final Path auditDir;

  EvacuationBench(Report report, BenchOptions opts, Path work) {
    this.report = report;
    this.opts = opts;
    this.work = work.resolve("bench-evacuation");
    this.auditDir = this.work.resolve("audit");
  }

  /**
   * One timed drain; CPU seconds cover the drain and the recovery (controller; whole machine, all
   * cores).
   */
  record Run(
      int vmis,
      String workers,
      double drainSeconds,
      double recoverySeconds,
      List<Double> perVmiSeconds,
      Map<String, Integer> infraCalls,
      Map<String, Integer> guestCalls,
      double infraAll,
      double guestAll,
      double controllerCpuSeconds,
      double machineBusySeconds) {}

  void run() throws Exception {
    List<Integer> sizes = opts.ints("bench.evac.sizes", "1,10,50");
    int guestCount = opts.integer("bench.evac.guests", 5);
    int pods = opts.integer("bench.evac.pods", 20);
    Files.createDirectories(work);
    BenchMain.progress(
        "evacuation: starting an infra cluster and "
            + guestCount
            + " guest clusters (each: etcd, "
            + "kube-apiserver, kube-controller-manager, kube-scheduler, kwok)");
    List<LocalCluster.Builder> builders = new ArrayList<>();
    builders.add(withAudit(LocalCluster.builder("bench-evac-infra").withAll(), "bench-evac-infra"));
    for (int k = 0; k < guestCount; k++) {
      builders.add(
          withAudit(
              LocalCluster.builder("bench-evac-guest-" + k).withAll(), "bench-evac-guest-" + k));
    }
    List<LocalCluster> clusters = BenchMain.startAll(builders);
    LocalCluster infra = clusters.get(0);
    List<LocalCluster> guests = clusters.subList(1, clusters.size());
    List<World> worlds = new ArrayList<>();
    try {
      Path controllerKubeconfig =
          ControllerIdentity.infraKubeconfig(infra, work.resolve("controller-infra.kubeconfig"));
      BenchMain.progress(
          "evacuation: creating VMs, guest nodes and workloads for " + sizes + " VMIs");
      // One world first (it installs the CRDs and starts the stand-in), then the others side by
      // side.
      worlds.add(new World(infra, guests, sizes.get(0), pods));
      ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, sizes.size() - 1));
      List<CompletableFuture<World>> more = new ArrayList<>();
      for (int size : sizes.subList(1, sizes.size())) {
        more.add(CompletableFuture.supplyAsync(() -> new World(infra, guests, size, pods), pool));
      }
      for (CompletableFuture<World> f : more) {
        worlds.add(f.join());
      }
      pool.shutdown();
      for (World w : worlds) {
        w.awaitSettled(w.holding, Map.of(), Duration.ofMinutes(5));
      }
      List<Run> results = new ArrayList<>();
      try (VmiTracker tracker = new VmiTracker(new RawKube(infra))) {
        for (World w : worlds) {
          // One VMI is one reconcile whatever the worker count: --workers=1 only matters from two
          // VMIs on.
          for (String workers : w.size == 1 ? List.of("default") : List.of("default", "1")) {
            int runs = opts.runs("bench.evac.runs." + w.size, w.size >= 50 ? 3 : 5);
            if (runs < 5) {
              report.note(
                  Report.f(
                      "Evacuation, %d VMIs, workers %s: %d runs, not 5: a run of %d VMIs (drain, then "
                          + "recovery of every VM, guest node and pod) takes 1–3 minutes on 2 cores, and 5 would not fit "
                          + "`make bench` in 30 minutes. `BENCH_OPTS=-Dbench.evac.runs.%d=5` runs 5.",
                      w.size, workers, runs, w.size, w.size));
            }
            List<String> flags = new ArrayList<>(List.of("--kubeconfig=" + controllerKubeconfig));
            if (!workers.equals("default")) {
              flags.add("--workers=" + workers);
            }
            try (BenchController c =
                BenchController.start(
                    "evac-" + w.size + "-w" + workers, work, flags, Duration.ofMinutes(2))) {
              AuditLog.awaitQuiet(auditDir, clusters);
              for (int r = 0; r < runs; r++) {
                Run run = w.runOnce(tracker, workers, infra, guests, c.pid());
                results.add(run);
                Stats per = Stats.of(run.perVmiSeconds());
                BenchMain.progress(
                    Report.f(
                        "evacuation: %d VMIs, workers %s, run %d: drain %.1f s, per-VMI p50 %.1f s "
                            + "p99 %.1f s, recovery %.1f s, controller requests/evacuation infra %.1f guest %.1f",
                        w.size,
                        workers,
                        r + 1,
                        run.drainSeconds(),
                        per.percentile(50),
                        per.percentile(99),
                        run.recoverySeconds(),
                        AuditLog.total(run.infraCalls()) / (double) w.size,
                        AuditLog.total(run.guestCalls()) / (double) w.size));
              }
            }
          }
        }
      }
      write(results, sizes, pods, guestCount);
    } finally {
      for (World w : worlds) {
        w.world.close();
      }
      EvacuationWorld.stopStandIn(infra);
      clusters.forEach(LocalCluster::close);
    }
  }

  private LocalCluster.Builder withAudit(LocalCluster.Builder b, String name) {
    AuditLog.apiServerFlags(auditDir, name).forEach(b::apiServerFlag);
    return b;
  }

  /**
   * N VMIs of up to five tenants on a pair of infra nodes, with their guest nodes and pinned
   * workloads.
   */
  private final class World {
    final int size;
    final int pods;
    final EvacuationWorld world;
    final LocalCluster infra;
    final RawKube infraApi;
    final List<TenantCluster> tenants = new ArrayList<>();
    final Map<TenantCluster, List<String>> vms = new LinkedHashMap<>();
    final Map<TenantCluster, RawKube> guestApi = new HashMap<>();
    final List<LocalCluster> guestsUsed = new ArrayList<>();
    String holding;
    String other;

    World(LocalCluster infra, List<LocalCluster> guests, int size, int pods) {
      this.size = size;
      this.pods = pods;
      this.infra = infra;
      this.infraApi = new RawKube(infra);
      String prefix = "e" + size;
      this.world = EvacuationWorld.start(infra, prefix, 2);
      this.holding = world.infraNodes().get(0);
      this.other = world.infraNodes().get(1);
      int tenantCount = Math.min(guests.size(), size);
      try {
        for (int k = 0; k < tenantCount; k++) {
          LocalCluster guest = guests.get(k);
          TenantCluster t = world.addTenant("t" + k, guest);
          ControllerIdentity.useInGuest(t, guest);
          tenants.add(t);
          guestApi.put(t, new RawKube(guest));
          guestsUsed.add(guest);
          List<String> names = new ArrayList<>();
          for (int i = k; i < size; i += tenantCount) {
            names.add(prefix + "-t" + k + "-" + names.size());
          }
          vms.put(t, names);
          world.addVmsOn(holding, t, "External", names.toArray(String[]::new));
          deployWorkloads(guestApi.get(t), prefix, names);
        }
      } catch (Exception e) {
        throw new IllegalStateException(
            "cannot set up the world of " + size + " VMIs: " + e.getMessage(), e);
      }
    }

    private void deployWorkloads(RawKube guest, String ns, List<String> nodes) throws Exception {
      guest.createNamespace(ns);
      for (String node : nodes) {
        guest.post(
            "/apis/apps/v1/namespaces/" + ns + "/deployments",
            """
                        {"metadata":{"name":"w-%1$s"},"spec":{"replicas":%2$d,"selector":{"matchLabels":{"app":"w-%1$s"}},
                         "template":{"metadata":{"labels":{"app":"w-%1$s"}},"spec":{"nodeSelector":{"kubernetes.io/hostname":"%1$s"},
                          "terminationGracePeriodSeconds":1,"containers":[{"name":"main","image":"registry.example/app:1"}]}}}}"""
                .formatted(node, pods));
      }
    }

    /** UID of every VMI of this world, by namespace/name. */
    Map<String, String> uids() throws Exception {
      Map<String, String> out = new HashMap<>();
      for (TenantCluster t : tenants) {
        for (JsonElement e :
            infraApi
                .getJson(
                    "/apis/kubevirt.io/v1/namespaces/" + t.namespace() + "/virtualmachineinstances")
                .getAsJsonArray("items")) {
          JsonObject vmi = e.getAsJsonObject();
          out.put(
              t.namespace() + "/" + RawKube.str(vmi, "metadata", "name"),
              RawKube.str(vmi, "metadata", "uid"));
        }
      }
      return out;
    }

    /**
     * Waits until every VMI runs on {@code node} (with a new UID where {@code previous} names one),
     * every guest node is schedulable without our mark and every pinned pod runs.
     */
    void awaitSettled(String node, Map<String, String> previous, Duration timeout) {
      Await.until(
          "world of " + size + " VMIs settled on " + node, timeout, () -> settled(node, previous));
    }

    private boolean settled(String node, Map<String, String> previous) throws Exception {
      String ns = "e" + size;
      for (TenantCluster t : tenants) {
        List<String> names = vms.get(t);
        RawKube g = guestApi.get(t);
        if (WorldChecks.vmisRunningOn(infraApi, t.namespace(), node, previous) != names.size()
            || !WorldChecks.schedulable(g, names)) {
          return false;
        }
        Map<String, Integer> running = WorldChecks.runningPods(g, ns, WorldChecks::nodeOf);
        if (!WorldChecks.eachHas(running, names, pods)) {
          return false;
        }
      }
      return true;
    }

    /** One timed infra drain of the node holding the VMIs, then recovery on the other node. */
    Run runOnce(
        VmiTracker tracker,
        String workers,
        LocalCluster infraCluster,
        List<LocalCluster> allGuests,
        long controllerPid)
        throws Exception {
      Map<String, String> before = uids();
      double cpuBefore = Machine.processCpuSeconds(controllerPid);
      double busyBefore = Machine.busyCpuSeconds();
      Map<String, Double> infraBefore = ApiServerMetrics.byVerb(infraCluster);
      List<Map<String, Double>> guestsBefore =
          guestsUsed.stream().map(ApiServerMetrics::byVerb).toList();
      Instant from = Instant.now();
      long t0 = System.nanoTime();
      Kubectl.Result r = world.drainInfraNode(holding, Duration.ofMinutes(15));
      double drain = (System.nanoTime() - t0) / 1e9;
      if (!r.ok()) {
        throw new IllegalStateException(
            "kubectl drain " + holding + " failed: " + r.stderr() + r.stdout());
      }
      long t1 = System.nanoTime();
      awaitSettled(other, before, Duration.ofMinutes(5));
      double recovery = (System.nanoTime() - t1) / 1e9;
      double controllerCpu = Machine.processCpuSeconds(controllerPid) - cpuBefore;
      double machineBusy = Machine.busyCpuSeconds() - busyBefore;
      Instant to = Instant.now();
      double infraAll =
          ApiServerMetrics.nonWatch(
              ApiServerMetrics.minus(ApiServerMetrics.byVerb(infraCluster), infraBefore));
      double guestAll = 0;
      for (int i = 0; i < guestsUsed.size(); i++) {
        guestAll +=
            ApiServerMetrics.nonWatch(
                ApiServerMetrics.minus(
                    ApiServerMetrics.byVerb(guestsUsed.get(i)), guestsBefore.get(i)));
      }
      List<Double> per = new ArrayList<>();
      for (String uid : before.values()) {
        Double s = tracker.evacuationSeconds(uid);
        if (s != null) {
          per.add(s);
        }
      }
      Map<String, Integer> infraCalls =
          AuditLog.count(AuditLog.logOf(auditDir, infraCluster.name()), from, to);
      Map<String, Integer> guestCalls = new TreeMap<>();
      for (LocalCluster g : guestsUsed) {
        AuditLog.count(AuditLog.logOf(auditDir, g.name()), from, to)
            .forEach((k, v) -> guestCalls.merge(k, v, Integer::sum));
      }
      infraCluster.kubectl().runOrFail(null, "uncordon", holding);
      String h = holding;
      holding = other;
      other = h;
      return new Run(
          size,
          workers,
          drain,
          recovery,
          per,
          infraCalls,
          guestCalls,
          infraAll,
          guestAll,
          controllerCpu,
          machineBusy);
    }
  }

  private void write(List<Run> results, List<Integer> sizes, int pods, int guestCount) {
    StringBuilder s = new StringBuilder("## 2. Evacuation throughput\n\n");
    s.append(
        Report.f(
            "The real `kubectl drain --ignore-daemonsets --delete-emptydir-data --force` of an infra node holding N "
                + "External VMIs of up to %d tenant clusters (one local guest cluster each), with the KubeVirt stand-in "
                + "refusing the launcher evictions; %d pods per guest node (a Deployment pinned to the node by nodeSelector: "
                + "the replacements wait Pending until the node is uncordoned, then come back, ready for the next run). The "
                + "guest pods have no PodDisruptionBudget: with pinned replacements a budget that limits anything holds the "
                + "drain until the deadline; budgets are covered by benchmark 1 and the end-to-end tests. Drain: kubectl's "
                + "start to its exit (kubectl retries a refused launcher eviction every 5 s, so drains end on that beat). "
                + "CPU: seconds used over the drain and the recovery, by the controller and by the whole machine (all "
                + "cores: the six control planes, kwok, the stand-in, kubectl, the controller). Per VMI: "
                + "from `status.evacuationNodeName` set to the VMI's deletion, as a watch on the infra API server sees them, "
                + "pooled over the runs. Recovery (not a target): from the drain's end until every VM runs again on the other "
                + "node, its guest node is uncordoned and its pods run again. Controller: the jar, `%s`, default `--workers` "
                + "(16) or `--workers=1`.\n\n",
            guestCount, pods, BenchController.describeDeployed()));
    List<List<String>> rows = new ArrayList<>();
    Map<String, Stats> drainBy = new LinkedHashMap<>();
    for (int size : sizes) {
      for (String workers : List.of("default", "1")) {
        List<Run> rs =
            results.stream().filter(r -> r.vmis() == size && r.workers().equals(workers)).toList();
        if (rs.isEmpty()) {
          continue;
        }
        Stats drain = Stats.of(rs.stream().map(Run::drainSeconds).toList());
        drainBy.put(size + "/" + workers, drain);
        Stats per = Stats.of(rs.stream().flatMap(r -> r.perVmiSeconds().stream()).toList());
        rows.add(
            List.of(
                Integer.toString(size),
                workers.equals("default") ? "default (16)" : "1",
                Integer.toString(rs.size()),
                drain.medianMinMax(1),
                Report.f("%.1f", per.percentile(50)),
                Report.f("%.1f", per.percentile(99)),
                Integer.toString(per.n()),
                Stats.of(rs.stream().map(Run::recoverySeconds).toList()).medianMinMax(0),
                Stats.of(rs.stream().map(Run::controllerCpuSeconds).toList()).medianMinMax(1),
                Stats.of(rs.stream().map(Run::machineBusySeconds).toList()).medianMinMax(0)));
      }
    }
    s.append(
        Report.table(
            List.of(
                "VMIs",
                "workers",
                "runs",
                "infra drain s",
                "per-VMI p50 s",
                "per-VMI p99 s",
                "VMIs timed",
                "recovery s",
                "controller CPU s",
                "machine CPU s"),
            rows));
    s.append('\n');
    int largest = sizes.get(sizes.size() - 1);
    int smallest = sizes.get(0);
    Stats big = drainBy.get(largest + "/default");
    Stats one = drainBy.get(smallest + "/default");
    if (big != null && one != null && largest != smallest) {
      double ratio = big.median() / one.median();
      s.append(
          Report.f(
              "- %d VMIs / %d VMI (default workers), ratio of median drain times: **%.2f** (target ≤ 2)\n",
              largest, smallest, ratio));
      report.verdict(
          Report.f("2. drain time %d VMIs / %d VMI", largest, smallest),
          Report.f("%.2f", ratio),
          "≤ 2",
          ratio <= 2);
    }
    for (int size : sizes) {
      Stats d = drainBy.get(size + "/default");
      Stats serial = drainBy.get(size + "/1");
      if (d != null && serial != null && size > 1) {
        double ratio = d.median() / serial.median();
        s.append(
            Report.f(
                "- %d VMIs, default / `--workers=1`, ratio of median drain times: **%.2f** (target ≤ 0.1)\n",
                size, ratio));
        report.verdict(
            Report.f("2. drain time default / serial, %d VMIs", size),
            Report.f("%.2f", ratio),
            "≤ 0.1",
            ratio <= 0.1);
      }
    }
    report.section(s.toString());
    writeApiCost(results, sizes, pods);
  }

  private void writeApiCost(List<Run> results, List<Integer> sizes, int pods) {
    int target = 2 * pods + 10;
    StringBuilder s = new StringBuilder("## 5. API cost per evacuation\n\n");
    s.append(
        Report.f(
            "Requests the controller sent per evacuated VMI (guest node with P = %d pods), WATCH excluded, over "
                + "each run of benchmark 2 from the drain's start until recovery ended (so the uncordon after the VM's "
                + "return is included). `apiserver_request_total` has no client label, so the controller runs with its own "
                + "client certificate (user `%s`) in the infra and guest clusters, and each API server writes an audit log "
                + "of that user only; the controller's count is that log. For scale, the last two columns give "
                + "`apiserver_request_total` (all clients: kube-controller-manager recreating pods, scheduler, kwok, the "
                + "KubeVirt stand-in, kubectl drain, the benchmark's own polling) over the same window, per evacuated VMI. "
                + "Median (min–max) over the runs.\n\n",
            pods, AuditLog.USER));
    List<List<String>> rows = new ArrayList<>();
    for (int size : sizes) {
      for (String workers : List.of("default", "1")) {
        List<Run> rs =
            results.stream().filter(r -> r.vmis() == size && r.workers().equals(workers)).toList();
        if (rs.isEmpty()) {
          continue;
        }
        Stats infra =
            Stats.of(rs.stream().map(r -> AuditLog.total(r.infraCalls()) / (double) size).toList());
        Stats guest =
            Stats.of(rs.stream().map(r -> AuditLog.total(r.guestCalls()) / (double) size).toList());
        rows.add(
            List.of(
                Integer.toString(size),
                workers.equals("default") ? "default (16)" : "1",
                Integer.toString(rs.size()),
                infra.medianMinMax(1),
                guest.medianMinMax(1),
                Integer.toString(target),
                Stats.of(rs.stream().map(r -> r.infraAll() / size).toList()).medianMinMax(0),
                Stats.of(rs.stream().map(r -> r.guestAll() / size).toList()).medianMinMax(0)));
        if (workers.equals("default") && size == sizes.get(Math.min(1, sizes.size() - 1))) {
          report.verdict(
              Report.f("5. controller requests per evacuation, infra (P=%d, %d VMIs)", pods, size),
              Report.f("%.1f", infra.median()),
              "≤ 2P+10 = " + target,
              infra.median() <= target);
          report.verdict(
              Report.f("5. controller requests per evacuation, guest (P=%d, %d VMIs)", pods, size),
              Report.f("%.1f", guest.median()),
              "≤ 2P+10 = " + target,
              guest.median() <= target);
        }
      }
    }
    s.append(
        Report.table(
            List.of(
                "VMIs",
                "workers",
                "runs",
                "controller → infra",
                "controller → guest",
                "target 2P+10",
                "all clients → infra",
                "all clients → guests"),
            rows));
    // What the requests were, for the profile: every run of every configuration, per evacuated VMI.
    Map<String, Double> infraBy = new TreeMap<>();
    Map<String, Double> guestBy = new TreeMap<>();
    int evacuations = results.stream().mapToInt(Run::vmis).sum();
    for (Run r : results) {
      r.infraCalls().forEach((k, v) -> infraBy.merge(k, (double) v, Double::sum));
      r.guestCalls().forEach((k, v) -> guestBy.merge(k, (double) v, Double::sum));
    }
    s.append(
        Report.f(
            "\nThe controller's requests by verb and resource, averaged over all %d evacuations above:\n\n",
            evacuations));
    List<List<String>> detail = new ArrayList<>();
    infraBy.forEach(
        (k, v) -> detail.add(List.of("infra", "`" + k + "`", Report.f("%.2f", v / evacuations))));
    guestBy.forEach(
        (k, v) -> detail.add(List.of("guest", "`" + k + "`", Report.f("%.2f", v / evacuations))));
    s.append(Report.table(List.of("API server", "request", "per evacuation"), detail));
    report.section(s.toString());
  }
}
