package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Benchmarks 2 and 5: infra drain throughput and the controller's requests per evacuation. */
final class EvacuationBench extends Bench {

  record Run(int vmis, String workers, DrainWorld.Drained d) {}

  @Override
  void run() throws Exception {
    List<Integer> sizes = ints("bench.evac.sizes", "1,10,50");
    int guestCount = Integer.getInteger("bench.evac.guests", 5);
    int pods = Integer.getInteger("bench.evac.pods", 20);
    String rule = AuditLog.CONTROLLER_RULE;
    List<LocalCluster> clusters =
        startClusters("evac", guestCount, rule + AuditLog.INFRA_RULES, rule, true);
    LocalCluster infra = clusters.get(0);
    List<LocalCluster> guests = clusters.subList(1, clusters.size());
    List<DrainWorld> worlds = new CopyOnWriteArrayList<>();
    try {
      Path kubeconfig =
          AuditLog.controllerKubeconfig(infra, work.resolve("controller-infra.kubeconfig"));
      progress("evacuation: creating VMs, guest nodes and workloads for %s VMIs", sizes);
      // One world first (it installs the CRDs and starts the stand-in), then the others.
      for (List<Integer> batch : List.of(sizes.subList(0, 1), sizes.subList(1, sizes.size()))) {
        parallel(
            batch.size(),
            batch.size(),
            i ->
                worlds.add(
                    new DrainWorld(infra, guests, "e" + batch.get(i), batch.get(i), pods, false)));
      }
      worlds.sort(Comparator.comparingInt(w -> sizes.indexOf(w.size)));
      List<Run> results = new ArrayList<>();
      for (DrainWorld w : worlds) {
        // One VMI is one reconcile whatever the workers: --workers=1 matters from two VMIs on.
        for (String workers : w.size == 1 ? List.of("default") : List.of("default", "1")) {
          int runs = runs("bench.evac.runs." + w.size, w.size >= 50 ? 3 : 5);
          if (runs < 5) {
            report.note(
                Report.f(
                    "Evacuation, %d VMIs, workers %s: %d runs, not 5, to fit `make bench` in 30 minutes "
                        + "(`-Dbench.evac.runs.%1$d=5` runs 5).",
                    w.size, workers, runs));
          }
          String config = "--kubeconfig=" + kubeconfig;
          List<String> flags =
              workers.equals("default") ? List.of(config) : List.of(config, "--workers=" + workers);
          String name = "evac-" + w.size + "-w" + workers;
          try (ControllerProcess c =
              ControllerJar.start(name, work, flags, Duration.ofMinutes(2))) {
            AuditLog.awaitQuiet(auditDir(), clusters);
            for (int r = 0; r < runs; r++) {
              Run run = new Run(w.size, workers, w.drain(c.pid(), false, auditDir()));
              results.add(run);
              progress(
                  "evacuation: %d VMIs, workers %s, run %d: %s", w.size, workers, r + 1, run.d());
            }
          }
        }
      }
      write(results, sizes, pods, guestCount);
    } finally {
      DrainWorld.closeAll(worlds, clusters);
    }
  }

  private void write(List<Run> results, List<Integer> sizes, int pods, int guestCount) {
    int target = 2 * pods + 10;
    int verdictSize = sizes.get(Math.min(1, sizes.size() - 1));
    List<List<String>> rows = new ArrayList<>();
    List<List<String>> costRows = new ArrayList<>();
    Map<String, Stats> drainBy = new LinkedHashMap<>();
    for (int size : sizes) {
      for (String workers : List.of("default", "1")) {
        List<Run> rs =
            results.stream().filter(r -> r.vmis() == size && r.workers().equals(workers)).toList();
        if (rs.isEmpty()) {
          continue;
        }
        Stats drain = Stats.over(rs, r -> r.d().drainSeconds());
        drainBy.put(size + "/" + workers, drain);
        Stats per = Stats.of(rs.stream().flatMap(r -> r.d().perVmiSeconds().stream()).toList());
        String workersCell = workers.equals("default") ? "default (16)" : "1";
        rows.add(
            Report.row(
                size,
                workersCell,
                rs.size(),
                drain.medianMinMax(1),
                per.cells("%.1f", "p50", "p99"),
                per.n(),
                Stats.over(rs, r -> r.d().recoverySeconds()).medianMinMax(0),
                Stats.over(rs, r -> r.d().controllerCpuSeconds()).medianMinMax(1),
                Stats.over(rs, r -> r.d().machineBusySeconds()).medianMinMax(0)));
        Stats infra = Stats.over(rs, r -> AuditLog.total(r.d().infraCalls()) / (double) r.vmis());
        Stats guest = Stats.over(rs, r -> AuditLog.total(r.d().guestCalls()) / (double) r.vmis());
        costRows.add(
            Report.row(
                size,
                workersCell,
                rs.size(),
                infra.medianMinMax(1),
                guest.medianMinMax(1),
                target,
                Stats.over(rs, r -> r.d().infraAll() / r.vmis()).medianMinMax(0),
                Stats.over(rs, r -> r.d().guestAll() / r.vmis()).medianMinMax(0)));
        if (size == verdictSize && workers.equals("default")) {
          for (Stats side : List.of(infra, guest)) {
            report.atMost(
                Report.f(
                    "5. controller requests per evacuation, %s (P=%d, %d VMIs)",
                    side == infra ? "infra" : "guest", pods, size),
                "%.1f",
                side.median(),
                "≤ 2P+10 = " + target,
                target);
          }
        }
        Stats d = drainBy.get(size + "/default");
        if (workers.equals("1") && d != null && size > 1) {
          report.atMost(
              Report.f("2. drain time default / serial, %d VMIs", size),
              "%.2f",
              d.median() / drain.median(),
              "≤ 0.1",
              0.1);
        }
      }
    }
    int largest = sizes.get(sizes.size() - 1);
    Stats big = drainBy.get(largest + "/default");
    Stats one = drainBy.get(sizes.get(0) + "/default");
    if (big != null && one != null && largest != sizes.get(0)) {
      report.atMost(
          Report.f("2. drain time %d VMIs / %d VMI", largest, sizes.get(0)),
          "%.2f",
          big.median() / one.median(),
          "≤ 2",
          2);
    }
    report.section(
        Report.f(
                "## 2. Evacuation throughput\n\n"
                    + "The real `kubectl drain %s` of an infra node holding N External VMIs of up to %d tenant "
                    + "clusters, the KubeVirt stand-in refusing the launcher evictions; %d pods per guest node (a "
                    + "Deployment pinned to it: replacements wait for its uncordon), no budget (it would hold pinned "
                    + "pods to the deadline). Drain: kubectl's start to exit (it retries a refused eviction every "
                    + "5 s). Per VMI: marking stored to delete request (infra audit log), pooled over the runs. "
                    + "Recovery: drain's end until all is back. CPU over both. Controller `%s`.\n\n",
                String.join(" ", DrainBench.FLAGS.subList(0, 3)),
                guestCount,
                pods,
                ControllerJar.describeDeployed())
            + Report.table(
                "VMIs|workers|runs|infra drain s|per-VMI p50 s|per-VMI p99 s|VMIs timed|recovery s|controller CPU s|machine CPU s",
                rows));
    Map<String, Double> all = new TreeMap<>();
    int evacuations = results.stream().mapToInt(Run::vmis).sum();
    for (Run r : results) {
      AuditLog.perEvacuation(r.d().infraCalls(), r.d().guestCalls(), evacuations)
          .forEach((k, v) -> all.merge(k, v, Double::sum));
    }
    report.section(
        Report.f(
                "## 5. API cost per evacuation\n\n"
                    + "Requests the controller sent per evacuated VMI (P = %d pods), WATCH excluded, over each run of "
                    + "benchmark 2, by the audit logs of its own client certificate (user `%s`); all clients: "
                    + "`apiserver_request_total`. Median (min–max) over the runs.\n\n",
                pods, AuditLog.USER)
            + Report.table(
                "VMIs|workers|runs|controller → infra|controller → guest|target 2P+10|all clients → infra|all clients → guests",
                costRows)
            + "\nThe controller's requests by kind, per evacuation over all runs:\n\n"
            + AuditLog.requestTable(Map.of("all runs", all)));
  }
}
