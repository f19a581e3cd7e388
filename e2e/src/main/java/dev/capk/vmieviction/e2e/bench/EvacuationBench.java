package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

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
final class EvacuationBench extends Bench {

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

  @Override
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
    List<LocalCluster> clusters =
        BenchMain.startAll(
            "bench-evac-infra",
            "bench-evac-guest-",
            guestCount,
            n ->
                AuditLog.audited(
                    LocalCluster.builder(n).withAll(), auditDir(), n, AuditLog.CONTROLLER_RULE));
    LocalCluster infra = clusters.get(0);
    List<LocalCluster> guests = clusters.subList(1, clusters.size());
    List<DrainWorld> worlds = new ArrayList<>();
    try {
      Path controllerKubeconfig =
          AuditLog.controllerKubeconfig(infra, work.resolve("controller-infra.kubeconfig"));
      BenchMain.progress(
          "evacuation: creating VMs, guest nodes and workloads for " + sizes + " VMIs");
      // One world first (it installs the CRDs and starts the stand-in), then the others side by
      // side.
      worlds.add(new DrainWorld(infra, guests, "e" + sizes.get(0), sizes.get(0), pods, false));
      worlds.addAll(
          BenchMain.inParallel(
              sizes.subList(1, sizes.size()).stream()
                  .map(
                      n ->
                          (Callable<DrainWorld>)
                              () -> new DrainWorld(infra, guests, "e" + n, n, pods, false))
                  .toList(),
              w -> w.world.close()));
      for (DrainWorld w : worlds) {
        w.awaitSettled(w.holding, Map.of(), true, Duration.ofMinutes(5));
      }
      List<Run> results = new ArrayList<>();
      try (VmiTracker tracker = new VmiTracker(new RawKube(infra))) {
        for (DrainWorld w : worlds) {
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
            try (ControllerProcess c =
                ControllerJar.start(
                    "evac-" + w.size + "-w" + workers, work, flags, Duration.ofMinutes(2))) {
              AuditLog.awaitQuiet(auditDir(), clusters);
              for (int r = 0; r < runs; r++) {
                Run run = runOnce(w, tracker, workers, c.pid());
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
      worlds.forEach(w -> w.world.close());
      EvacuationWorld.stopStandIn(infra);
      clusters.forEach(LocalCluster::close);
    }
  }

  /**
   * One timed infra drain of the node holding the VMIs, then recovery on the other node; the
   * requests over that window, by the audit logs (the controller's) and {@code
   * apiserver_request_total} (everyone's).
   */
  private Run runOnce(DrainWorld w, VmiTracker tracker, String workers, long controllerPid)
      throws Exception {
    List<Map<String, Double>> before = new ArrayList<>();
    Runnable starting =
        () -> {
          before.add(ApiServerMetrics.byVerb(w.infra));
          w.guests.forEach(g -> before.add(ApiServerMetrics.byVerb(g)));
        };
    DrainWorld.Drained d = w.drain(controllerPid, false, starting, () -> {});
    double infraAll = ApiServerMetrics.since(w.infra, before.get(0));
    double guestAll = 0;
    for (int i = 0; i < w.guests.size(); i++) {
      guestAll += ApiServerMetrics.since(w.guests.get(i), before.get(i + 1));
    }
    List<Double> per = new ArrayList<>();
    for (String uid : d.before().values()) {
      Double s = tracker.evacuationSeconds(uid);
      if (s != null) {
        per.add(s);
      }
    }
    Map<String, Integer> infraCalls =
        AuditLog.count(AuditLog.logOf(auditDir(), w.infra.name()), d.from(), d.to());
    Map<String, Integer> guestCalls = AuditLog.count(auditDir(), w.guests, d.from(), d.to());
    w.swap();
    return new Run(
        w.size,
        workers,
        d.drainSeconds(),
        d.recoverySeconds(),
        per,
        infraCalls,
        guestCalls,
        infraAll,
        guestAll,
        d.controllerCpuSeconds(),
        d.machineBusySeconds());
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
            guestCount, pods, DeploymentJvm.describeDeployed()));
    List<List<String>> rows = new ArrayList<>();
    Map<String, Stats> drainBy = new LinkedHashMap<>();
    for (int size : sizes) {
      for (String workers : List.of("default", "1")) {
        List<Run> rs =
            results.stream().filter(r -> r.vmis() == size && r.workers().equals(workers)).toList();
        if (rs.isEmpty()) {
          continue;
        }
        Stats drain = Stats.over(rs, Run::drainSeconds);
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
                Stats.over(rs, Run::recoverySeconds).medianMinMax(0),
                Stats.over(rs, Run::controllerCpuSeconds).medianMinMax(1),
                Stats.over(rs, Run::machineBusySeconds).medianMinMax(0)));
      }
    }
    s.append(
        Report.table(
            "VMIs|workers|runs|infra drain s|per-VMI p50 s|per-VMI p99 s|VMIs timed|recovery s|controller CPU s|machine CPU s",
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
                Stats.over(rs, r -> r.infraAll() / size).medianMinMax(0),
                Stats.over(rs, r -> r.guestAll() / size).medianMinMax(0)));
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
            "VMIs|workers|runs|controller → infra|controller → guest|target 2P+10|all clients → infra|all clients → guests",
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
    s.append(Report.table("API server|request|per evacuation", detail));
    report.section(s.toString());
  }
}
