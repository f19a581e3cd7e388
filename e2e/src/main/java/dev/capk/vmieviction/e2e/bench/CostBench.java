package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Benchmark 9, cost per evacuation (issue 21), ours and CAPK's Go original: see its section. */
final class CostBench extends Bench {
  /** Controller CPU per evacuation in a fresh process (issue 31; 0.12 before it). */
  private static final double TARGET_CPU = 0.10;

  /** The issue's measurements of the Go original: the targets' reference when not measured. */
  private static final double ISSUE_GO_GUEST_BUDGET = 56;

  private static final double ISSUE_GO_SERIAL_BUDGET_SECONDS = 169;

  private Path go;
  private Path kubeconfig;
  private List<LocalCluster> clusters;

  /**
   * Which controller, with or without budgets, how many workers; and which run of the same process
   * (1: the process started just before it, as the targets count; 2 and on: the same process again,
   * warmed up by the runs before).
   */
  record Config(String controller, boolean budget, int workers, int round) {
    String label() {
      return Report.f(
          "%s, %s, %dw%s",
          controller,
          budget ? "budget" : "no budget",
          workers,
          round > 1 ? ", run " + round + " of one process" : "");
    }
  }

  /**
   * The controller's cost over one run of {@code vmis} evacuations (see {@link DrainWorld#drain}).
   */
  record Run(Config config, int vmis, DrainWorld.Drained d, double startupCpuSeconds) {
    /**
     * Requests per evacuation to the infra or the guest API servers: on Events (the writes, and for
     * guest node Events the reads of a series), or all others.
     */
    double per(boolean infra, boolean events) {
      return (infra ? d.infraCalls() : d.guestCalls())
              .entrySet().stream()
                  .filter(e -> e.getKey().endsWith(" events") == events)
                  .mapToInt(Map.Entry::getValue)
                  .sum()
          / (double) vmis;
    }

    double cpu() {
      return d.controllerCpuSeconds() / vmis;
    }
  }

  @Override
  void run() throws Exception {
    int vmis = Integer.getInteger("bench.cost.vmis", 10);
    int pods = Integer.getInteger("bench.cost.pods", 10);
    int tenants = Integer.getInteger("bench.cost.tenants", 2);
    List<Integer> workers = ints("bench.cost.workers", "16,1");
    List<String> budgets = strings("bench.cost.budgets", "none,budget");
    // More than 1: each process runs the world again, to tell JVM warm-up from steady cost.
    int rounds = Integer.getInteger("bench.cost.rounds", 1);
    go = ControllerJar.goBinary();
    String loadAtStart = BenchMain.loadAverage();
    List<String> controllers = go == null ? List.of("ours") : List.of("ours", "go");
    // The API servers log the controller's requests (the counts) and, on the infra cluster, every
    // VMI's marking and deletion (the pace).
    String rule = AuditLog.CONTROLLER_RULE;
    clusters = startClusters("cost", tenants, rule + AuditLog.INFRA_RULES, rule, true);
    LocalCluster infra = clusters.get(0);
    List<LocalCluster> guests = clusters.subList(1, clusters.size());
    List<DrainWorld> worlds = new ArrayList<>();
    try {
      kubeconfig =
          AuditLog.controllerKubeconfig(infra, work.resolve("controller-infra.kubeconfig"));
      progress("cost: creating %d VMs and %d pods per guest node", vmis, pods);
      DrainWorld many = new DrainWorld(infra, guests, "c", vmis, pods, true);
      worlds.add(many);
      DrainWorld one = new DrainWorld(infra, guests.subList(0, 1), "s", 1, pods, true);
      worlds.add(one);
      String twin = one.addPlainNode("s-twin");
      one.setBudgets(true);
      List<Run> runs = new ArrayList<>();
      for (String budget : budgets) {
        boolean withBudget = budget.equals("budget");
        many.setBudgets(withBudget);
        for (String controller : controllers) {
          for (int w : workers) {
            try (ControllerProcess p = start(new Config(controller, withBudget, w, 1))) {
              for (int round = 1; round <= rounds; round++) {
                many.spares(withBudget);
                AuditLog.awaitQuiet(auditDir(), clusters);
                double startup =
                    round > 1 ? Double.NaN : ControllerProcess.processCpuSeconds(p.pid());
                Config config = new Config(controller, withBudget, w, round);
                Run r = runOnce(many, p.pid(), config, startup);
                runs.add(r);
                progress("cost: %s: %s", config.label(), r.d());
                if (withBudget) {
                  many.returnPodsHome();
                }
              }
            }
          }
        }
      }
      Map<String, Double> paces = pace(one, twin, controllers);
      write(runs, paces, vmis, pods, loadAtStart);
    } finally {
      DrainWorld.closeAll(worlds, clusters);
    }
  }

  private ControllerProcess start(Config config) throws Exception {
    String name = config.label().replaceAll("[^a-z0-9]+", "-");
    if (config.controller().equals("go")) {
      return ControllerJar.startGo(name, go, work, kubeconfig, config.workers());
    }
    List<String> flags = List.of("--kubeconfig=" + kubeconfig, "--workers=" + config.workers());
    return ControllerJar.start(name, work, flags, Duration.ofMinutes(2));
  }

  private Run runOnce(DrainWorld w, long controllerPid, Config config, double startupCpuSeconds)
      throws Exception {
    boolean go = config.controller().equals("go");
    return new Run(config, w.size, w.drain(controllerPid, go, auditDir()), startupCpuSeconds);
  }

  /**
   * The real `kubectl drain` of the twin guest node, then each controller's drain of the one VMI's
   * guest node (fresh process, 16 workers), with the pods sent home between them: seconds by tool.
   */
  private Map<String, Double> pace(DrainWorld one, String twin, List<String> controllers)
      throws Exception {
    Map<String, Double> out = new LinkedHashMap<>();
    one.spares(true);
    LocalCluster guest = one.guests.get(0);
    Tool kubectl = DrainBench.kubectl(guest, "kubectl drain", List.of(twin));
    out.put(kubectl.name(), time(kubectl, Duration.ofMinutes(11)).wall());
    progress("cost: pace: kubectl drain of %s: %.1f s", twin, out.get("kubectl drain"));
    kubectl(guest, "uncordon " + twin);
    String vmi = one.vmNames().get(0);
    for (String controller : controllers) {
      one.returnPodsHome();
      one.spares(true);
      Config config = new Config(controller, true, 16, 1);
      try (ControllerProcess p = start(config)) {
        AuditLog.awaitQuiet(auditDir(), clusters);
        Run o = runOnce(one, p.pid(), config, Double.NaN);
        if (o.d().perVmiSeconds().isEmpty()) {
          throw new IllegalStateException("no marking and delete of " + vmi + " in the audit log");
        }
        out.put(controller, o.d().perVmiSeconds().get(0));
        progress("cost: pace: %s: %.1f s", controller, out.get(controller));
      }
    }
    return out;
  }

  private void write(
      List<Run> runs, Map<String, Double> paces, int vmis, int pods, String loadAtStart) {
    List<List<String>> rows = new ArrayList<>();
    Map<String, Map<String, Double>> byKind = new LinkedHashMap<>();
    for (Run r : runs) {
      Config c = r.config();
      byKind.put(
          c.label(), AuditLog.perEvacuation(r.d().infraCalls(), r.d().guestCalls(), r.vmis()));
      rows.add(
          Report.row(
              c.controller(),
              c.budget() ? "maxUnavailable 1" : "none",
              c.workers(),
              Report.f("%.1f", r.d().drainSeconds()),
              Report.f("%.1f", r.d().recoverySeconds()),
              Report.f("%.1f", r.per(true, false)),
              Report.f("%.1f", r.per(true, true)),
              Report.f("%.1f", r.per(false, false)) + (c.budget() ? "" : " (≤ " + (pods + 4) + ")"),
              Report.f("%.1f", r.per(false, true)),
              Report.f("%.3f", r.cpu()),
              Report.f(
                  "%.0f / %.0f / %.0f / %.2f s",
                  r.per(true, false) * r.vmis(),
                  r.per(true, true) * r.vmis(),
                  r.per(false, false) * r.vmis(),
                  r.d().controllerCpuSeconds()),
              Double.isNaN(r.startupCpuSeconds()) ? "–" : Report.f("%.2f", r.startupCpuSeconds())));
    }
    verdicts(runs, pods);
    double kubectl = paces.get("kubectl drain");
    List<List<String>> paceRows = new ArrayList<>();
    paces.forEach(
        (tool, seconds) ->
            paceRows.add(
                Report.row(tool, Report.f("%.1f", seconds), Report.f("%.2f", seconds / kubectl))));
    if (paces.containsKey("ours")) {
      report.atMost(
          "9. one guest node under a budget, ours / kubectl drain",
          "%.2f",
          paces.get("ours") / kubectl,
          "≤ 0.5",
          0.5);
    }
    report.section(
        Report.f(
                "## 9. Cost per evacuation\n\n"
                    + "The real `kubectl drain` of an infra node holding %d External VMIs of 2 tenants, %d pods per "
                    + "guest node (a Deployment per node, also allowed on a spare guest node cordoned unless the run "
                    + "has budgets); one run per row, on a controller started just before it (-Dbench.cost.rounds=N: "
                    + "'run 2 of one process' and on reuse it). Requests: audit logs of the controller's identity "
                    + "(`%s`), WATCH excluded, from the drain's start until all is back (the benchmark uncordons for "
                    + "the Go original, which never does). CPU: the controller's user + system seconds over that "
                    + "window. Load average at the start %s, at the end %s. Ours: `%s`. Go original: %s.\n\n",
                vmis,
                pods,
                AuditLog.USER,
                loadAtStart,
                BenchMain.loadAverage(),
                ControllerJar.describeDeployed(),
                go == null
                    ? "not measured (pass -D" + ControllerJar.GO_PROPERTY + ")"
                    : "`" + go + "` with `--concurrency` as the workers")
            + Report.table(
                "controller|budget|workers|infra drain s|recovery s|infra requests / evac. (≤ 3)"
                    + "|infra Event requests / evac. (≤ 4 writes)|guest requests / evac."
                    + "|guest Event requests / evac.|CPU s / evac. (≤ "
                    + TARGET_CPU
                    + ")|totals: infra / Events / guest / CPU|start-up CPU s",
                rows)
            + "\nOne guest node of 10 pods under maxUnavailable 1: `kubectl drain` of a twin node (start to "
            + "exit) against each controller (fresh, 16 workers; marking stored to delete request):\n\n"
            + Report.table("drain of one guest node|s|/ kubectl", paceRows)
            + "\nThe requests by kind:\n\n"
            + AuditLog.requestTable(byKind));
  }

  private void verdicts(List<Run> runs, int pods) {
    for (Run r : runs) {
      Config c = r.config();
      if (!c.controller().equals("ours") || c.round() > 1) {
        continue;
      }
      String what = "9. " + c.label() + ", per evacuation: ";
      Optional<Run> goRun =
          runs.stream()
              .filter(g -> g.config().equals(new Config("go", c.budget(), c.workers(), 1)))
              .findFirst();
      report.atMost(what + "infra requests", "%.1f", r.per(true, false), "≤ 3", 3);
      if (c.budget()) {
        double goGuest = goRun.map(g -> g.per(false, false)).orElse(ISSUE_GO_GUEST_BUDGET);
        report.atMost(
            what + "guest requests",
            "%.1f",
            r.per(false, false),
            Report.f("≤ Go original's %.1f", goGuest),
            goGuest);
      } else {
        report.atMost(
            what + "infra Event writes", "%.1f", r.per(true, true), "≤ 4 (straight evacuation)", 4);
        report.atMost(
            what + "guest requests",
            "%.1f",
            r.per(false, false),
            "≤ P+4 = " + (pods + 4),
            pods + 4);
      }
      report.atMost(what + "CPU s", "%.3f", r.cpu(), "≤ " + TARGET_CPU, TARGET_CPU);
      if (c.budget() && c.workers() == 1) {
        double goSeconds =
            goRun.map(g -> g.d().drainSeconds()).orElse(ISSUE_GO_SERIAL_BUDGET_SECONDS);
        report.atMost(
            "9. " + r.vmis() + " VMIs, budget, 1 worker: infra drain s",
            "%.1f",
            r.d().drainSeconds(),
            Report.f("≤ Go original's %.1f", goSeconds),
            goSeconds);
      }
    }
  }
}
