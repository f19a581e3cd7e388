package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonArray;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Benchmark 8, live migration (issue 16). One infra cluster with the KubeVirt stand-in and two
 * guest clusters; 20 External VMIs (10 per tenant) on one of two infra nodes, each LiveMigratable
 * (status condition) with a short stand-in migration. A run is the real `kubectl drain` of the node
 * holding them with the controller at {@code --live-migration=prefer} or {@code never}: with prefer
 * the VMIs move with VirtualMachineInstanceMigrations and keep their UIDs, with never each guest
 * node is drained and the VMI deleted and recreated on the other node. Runs alternate the policies,
 * each against the node the previous run left the VMIs on. Measures the drain, the guest pods
 * disrupted, the VMIs deleted or migrated and the migrations created.
 */
final class MigrationBench {
  private static final String NS = "mig";
  private static final List<String> POLICIES = List.of("prefer", "never");
  private static final String RESULT_ANNOTATION = "standin.kubevirt.io/migration-result";
  private static final String DURATION_ANNOTATION = "standin.kubevirt.io/migration-duration";

  private final Report report;
  private final BenchOptions opts;
  private final Path work;

  MigrationBench(Report report, BenchOptions opts, Path work) {
    this.report = report;
    this.opts = opts;
    this.work = work.resolve("bench-migration");
  }

  /** One timed drain under one policy. */
  record Run(
      String policy,
      double drainSeconds,
      double recoverySeconds,
      int podsDisrupted,
      int podsBefore,
      int vmisMigrated,
      int vmisDeleted,
      int vmisOther,
      int migrationsCreated,
      int migrationsSucceeded,
      int peakMigrationsRunning) {}

  void run() throws Exception {
    int tenantsCount = opts.integer("bench.migration.tenants", 2);
    int vmisPerTenant = opts.integer("bench.migration.vmisPerTenant", 10);
    int pods = opts.integer("bench.migration.pods", 3);
    String duration = System.getProperty("bench.migration.duration", "1");
    int runs = opts.runs("bench.migration.runs", 2);
    List<String> policies = opts.strings("bench.migration.policies", String.join(",", POLICIES));
    // More controller flags for both policies, e.g.
    // -Dbench.migration.flags=--drain-retry-interval=5s
    List<String> extraFlags = opts.strings("bench.migration.flags", "");
    Files.createDirectories(work);
    BenchMain.progress(
        "migration: starting an infra cluster and " + tenantsCount + " guest clusters");
    List<LocalCluster.Builder> builders = new ArrayList<>();
    builders.add(LocalCluster.builder("bench-mig-infra").withAll());
    for (int k = 0; k < tenantsCount; k++) {
      builders.add(LocalCluster.builder("bench-mig-guest-" + k).withAll());
    }
    List<LocalCluster> clusters = BenchMain.startAll(builders);
    LocalCluster infra = clusters.get(0);
    World world = null;
    try {
      BenchMain.progress(
          "migration: creating "
              + tenantsCount * vmisPerTenant
              + " VMs, their guest nodes and "
              + pods
              + " pods per guest node");
      world = new World(infra, clusters.subList(1, clusters.size()), vmisPerTenant, pods);
      world.awaitSettled(world.holding, Duration.ofMinutes(5));
      List<Run> results = new ArrayList<>();
      for (int r = 0; r < runs; r++) {
        for (String policy : policies) {
          world.prepare(duration);
          try (BenchController c =
              BenchController.start(
                  "migration-" + policy + "-run" + (r + 1),
                  work,
                  flags(infra, policy, extraFlags),
                  Duration.ofMinutes(2))) {
            // After a start the controller looks at every Running VMI once; let that pass first.
            Thread.sleep(3000);
            Run run = world.runOnce(policy);
            results.add(run);
            BenchMain.progress(
                Report.f(
                    "migration: %s, run %d: drain %.1f s, recovery %.1f s, guest pods disrupted %d of %d, "
                        + "VMIs migrated %d deleted %d, migrations created %d (succeeded %d, at most %d at once)",
                    policy,
                    r + 1,
                    run.drainSeconds(),
                    run.recoverySeconds(),
                    run.podsDisrupted(),
                    run.podsBefore(),
                    run.vmisMigrated(),
                    run.vmisDeleted(),
                    run.migrationsCreated(),
                    run.migrationsSucceeded(),
                    run.peakMigrationsRunning()));
          }
        }
      }
      write(results, runs, tenantsCount, vmisPerTenant, pods, duration, extraFlags);
    } finally {
      if (world != null) {
        world.world.close();
      }
      EvacuationWorld.stopStandIn(infra);
      clusters.forEach(LocalCluster::close);
    }
  }

  private static List<String> flags(LocalCluster infra, String policy, List<String> extra) {
    List<String> flags = new ArrayList<>();
    flags.add("--kubeconfig=" + infra.kubeconfig());
    flags.add("--live-migration=" + policy);
    flags.addAll(extra);
    return flags;
  }

  /** The VMIs of every tenant on a pair of infra nodes, their guest nodes and pinned pods. */
  private static final class World {
    final EvacuationWorld world;
    final RawKube infraApi;
    final int pods;
    final List<TenantCluster> tenants = new ArrayList<>();
    final Map<TenantCluster, List<String>> vms = new LinkedHashMap<>();
    final Map<TenantCluster, RawKube> guestApi = new HashMap<>();
    String holding;
    String other;

    World(LocalCluster infra, List<LocalCluster> guests, int vmisPerTenant, int pods)
        throws Exception {
      this.pods = pods;
      this.infraApi = new RawKube(infra);
      this.world = EvacuationWorld.start(infra, NS, 2);
      this.holding = world.infraNodes().get(0);
      this.other = world.infraNodes().get(1);
      for (int k = 0; k < guests.size(); k++) {
        TenantCluster t = world.addTenant("t" + k, guests.get(k));
        tenants.add(t);
        RawKube g = new RawKube(guests.get(k));
        guestApi.put(t, g);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < vmisPerTenant; i++) {
          names.add(NS + "-t" + k + "-" + i);
        }
        vms.put(t, names);
        world.addVmsOn(holding, t, "External", names.toArray(String[]::new));
        deployWorkloads(g, names);
      }
    }

    /**
     * {@code pods} pods pinned to each guest node (a Deployment per node, nodeSelector), no budget:
     * see {@link MigrationBench#write}.
     */
    private void deployWorkloads(RawKube guest, List<String> nodes) throws Exception {
      guest.createNamespace(NS);
      for (String node : nodes) {
        guest.post(
            "/apis/apps/v1/namespaces/" + NS + "/deployments",
            """
                {"metadata":{"name":"w-%1$s"},"spec":{"replicas":%2$d,"selector":{"matchLabels":{"app":"w-%1$s"}},
                 "template":{"metadata":{"labels":{"app":"w-%1$s"}},"spec":{"nodeSelector":{"kubernetes.io/hostname":"%1$s"},
                  "terminationGracePeriodSeconds":1,"containers":[{"name":"main","image":"registry.example/app:1"}]}}}}"""
                .formatted(node, pods));
      }
    }

    private String vmiPath(TenantCluster t) {
      return "/apis/kubevirt.io/v1/namespaces/" + t.namespace() + "/virtualmachineinstances";
    }

    private String migrationsPath(TenantCluster t) {
      return "/apis/kubevirt.io/v1/namespaces/"
          + t.namespace()
          + "/virtualmachineinstancemigrations";
    }

    /**
     * Makes every VMI LiveMigratable, as virt-controller reports it (the status condition), with a
     * stand-in migration that succeeds after {@code duration} seconds. A VMI recreated by a run
     * under never is a new object without either, so every run sets them again.
     */
    void prepare(String duration) throws Exception {
      for (TenantCluster t : tenants) {
        for (JsonElement e : infraApi.getJson(vmiPath(t)).getAsJsonArray("items")) {
          JsonObject vmi = e.getAsJsonObject();
          String path = vmiPath(t) + "/" + RawKube.str(vmi, "metadata", "name");
          infraApi.mergePatch(
              path,
              Report.f(
                  "{\"metadata\":{\"annotations\":{\"%s\":\"succeed\",\"%s\":\"%s\"}}}",
                  RESULT_ANNOTATION, DURATION_ANNOTATION, duration));
          JsonArray conditions = new JsonArray();
          JsonObject status = vmi.getAsJsonObject("status");
          if (status != null && status.has("conditions")) {
            for (JsonElement c : status.getAsJsonArray("conditions")) {
              if (!"LiveMigratable".equals(RawKube.str(c.getAsJsonObject(), "type"))) {
                conditions.add(c);
              }
            }
          }
          JsonObject migratable = new JsonObject();
          migratable.addProperty("type", "LiveMigratable");
          migratable.addProperty("status", "True");
          conditions.add(migratable);
          JsonObject patch = new JsonObject();
          JsonObject s = new JsonObject();
          s.add("conditions", conditions);
          patch.add("status", s);
          infraApi.mergePatch(path + "/status", patch.toString());
        }
      }
    }

    /** UID and node of every VMI, by namespace/name. */
    Map<String, String[]> vmis() throws Exception {
      Map<String, String[]> out = new HashMap<>();
      for (TenantCluster t : tenants) {
        for (JsonElement e : infraApi.getJson(vmiPath(t)).getAsJsonArray("items")) {
          JsonObject vmi = e.getAsJsonObject();
          out.put(
              t.namespace() + "/" + RawKube.str(vmi, "metadata", "name"),
              new String[] {
                RawKube.str(vmi, "metadata", "uid"), RawKube.str(vmi, "status", "nodeName")
              });
        }
      }
      return out;
    }

    /** UID of every guest pod of the workloads, over all guest clusters. */
    Set<String> podUids() throws Exception {
      Set<String> out = new HashSet<>();
      for (RawKube g : guestApi.values()) {
        for (JsonElement e :
            g.getJson("/api/v1/namespaces/" + NS + "/pods").getAsJsonArray("items")) {
          out.add(RawKube.str(e.getAsJsonObject(), "metadata", "uid"));
        }
      }
      return out;
    }

    /** Every migration object, by UID, with its phase ("" when none yet). */
    Map<String, String> migrations() throws Exception {
      Map<String, String> out = new HashMap<>();
      for (TenantCluster t : tenants) {
        for (JsonElement e : infraApi.getJson(migrationsPath(t)).getAsJsonArray("items")) {
          JsonObject m = e.getAsJsonObject();
          String phase = RawKube.str(m, "status", "phase");
          out.put(RawKube.str(m, "metadata", "uid"), phase == null ? "" : phase);
        }
      }
      return out;
    }

    void awaitSettled(String node, Duration timeout) {
      Await.until("migration world settled on " + node, timeout, () -> settled(node));
    }

    /**
     * Every VMI Running on {@code node}, not marked, not being deleted; every guest node
     * schedulable without our mark; every pinned pod Running; no migration unfinished.
     */
    private boolean settled(String node) throws Exception {
      for (TenantCluster t : tenants) {
        RawKube g = guestApi.get(t);
        if (WorldChecks.vmisRunningOn(infraApi, t.namespace(), node, Map.of()) != vms.get(t).size()
            || !WorldChecks.schedulable(g, vms.get(t))) {
          return false;
        }
        Map<String, Integer> running = WorldChecks.runningPods(g, NS, WorldChecks::nodeOf);
        if (!WorldChecks.eachHas(running, vms.get(t), pods)) {
          return false;
        }
      }
      return migrations().values().stream()
          .allMatch(p -> p.equals("Succeeded") || p.equals("Failed"));
    }

    /**
     * One timed drain of the node holding the VMIs, then the wait until all run on the other one
     * with their guest nodes and pods back; counts what the run did.
     */
    Run runOnce(String policy) throws Exception {
      Map<String, String[]> vmisBefore = vmis();
      Set<String> podsBefore = podUids();
      Set<String> migrationsBefore = migrations().keySet();
      // Migrations not finished, polled while the drain lasts: KubeVirt's limits at work.
      AtomicBoolean draining = new AtomicBoolean(true);
      AtomicInteger peak = new AtomicInteger();
      Thread poller =
          new Thread(
              () -> {
                while (draining.get()) {
                  try {
                    long open =
                        migrations().values().stream()
                            .filter(p -> !p.equals("Succeeded") && !p.equals("Failed"))
                            .count();
                    peak.accumulateAndGet((int) open, Math::max);
                    Thread.sleep(250);
                  } catch (InterruptedException e) {
                    return;
                  } catch (Exception e) {
                    // a missed poll: the next one counts
                  }
                }
              },
              "bench-migration-poll");
      poller.setDaemon(true);
      poller.start();
      long t0 = System.nanoTime();
      Kubectl.Result r;
      try {
        r = world.drainInfraNode(holding, Duration.ofMinutes(10));
      } finally {
        draining.set(false);
      }
      double drain = (System.nanoTime() - t0) / 1e9;
      poller.join(5000);
      if (!r.ok()) {
        throw new IllegalStateException(
            "kubectl drain " + holding + " failed: " + r.stderr() + r.stdout());
      }
      long t1 = System.nanoTime();
      awaitSettled(other, Duration.ofMinutes(5));
      double recovery = (System.nanoTime() - t1) / 1e9;
      Map<String, String[]> vmisAfter = vmis();
      int migrated = 0;
      int deleted = 0;
      int otherOutcome = 0;
      for (Map.Entry<String, String[]> e : vmisBefore.entrySet()) {
        String[] after = vmisAfter.get(e.getKey());
        if (after == null || !after[0].equals(e.getValue()[0])) {
          deleted++;
        } else if (!String.valueOf(after[1]).equals(e.getValue()[1])) {
          migrated++;
        } else {
          otherOutcome++;
        }
      }
      Set<String> podsAfter = podUids();
      int disrupted = (int) podsBefore.stream().filter(u -> !podsAfter.contains(u)).count();
      Map<String, String> migrationsAfter = migrations();
      int created = 0;
      int succeeded = 0;
      for (Map.Entry<String, String> m : migrationsAfter.entrySet()) {
        if (!migrationsBefore.contains(m.getKey())) {
          created++;
          succeeded += m.getValue().equals("Succeeded") ? 1 : 0;
        }
      }
      world.infra().kubectl().runOrFail(null, "uncordon", holding);
      String h = holding;
      holding = other;
      other = h;
      return new Run(
          policy,
          drain,
          recovery,
          disrupted,
          podsBefore.size(),
          migrated,
          deleted,
          otherOutcome,
          created,
          succeeded,
          peak.get());
    }
  }

  private void write(
      List<Run> results,
      int runs,
      int tenantsCount,
      int vmisPerTenant,
      int pods,
      String duration,
      List<String> extraFlags) {
    int vmis = tenantsCount * vmisPerTenant;
    StringBuilder s = new StringBuilder("## 8. Live migration: infra drain, prefer vs never\n\n");
    s.append(
        Report.f(
            "The real `kubectl drain --ignore-daemonsets --delete-emptydir-data --force` of an infra node holding "
                + "%d External VMIs, %d in each of %d tenant clusters (one local guest cluster each), every VMI "
                + "LiveMigratable (the status condition virt-controller sets), with the controller at "
                + "`--live-migration=prefer` and at `--live-migration=never` (%s), %d run(s) each, "
                + "the policies alternating, each run draining the node the previous run left the VMIs on. The KubeVirt "
                + "stand-in refuses each launcher eviction and marks the VMI; under prefer the controller creates a "
                + "VirtualMachineInstanceMigration, which the stand-in walks through KubeVirt's phases (target launcher "
                + "pod on the other node, %s s in phase Running, then the VMI's nodeName moves, its mark is cleared, the "
                + "source pod goes: UID kept); under never it drains the guest node and deletes the VMI, and the VM comes "
                + "back on the other node with a new UID. KubeVirt's parallel limits are its defaults (no KubeVirt CR: 5 "
                + "migrations per cluster, 2 outbound per node), which the controller is to keep to: with one source node "
                + "at most 2 migrations at a time (the stand-in itself enforces no limit, so the column \"at once\" shows "
                + "what the controller did; real KubeVirt would hold any excess Pending). %d pods per guest node (a Deployment pinned to the node by "
                + "nodeSelector), without a PodDisruptionBudget: under never a pinned replacement waits Pending until the "
                + "guest node is uncordoned, so any budget that limits something would hold each guest drain to its "
                + "deadline (benchmark 7 measures blocked budgets). Drain: kubectl's start to its exit (kubectl retries a "
                + "refused launcher eviction every 5 s, so drains end on that beat). Guest pods disrupted: pods of the "
                + "workloads present before the drain and gone (evicted or deleted: UID no longer present) once every VM, "
                + "guest node and pod is back. VMIs: migrated = same UID, other nodeName; deleted = UID gone. Migrations: "
                + "VirtualMachineInstanceMigration objects created during the run; at once: unfinished ones, polled every "
                + "0.25 s during the drain. Recovery (not a target): drain's end until everything is back.\n\n",
            vmis,
            vmisPerTenant,
            tenantsCount,
            extraFlags.isEmpty()
                ? "default flags otherwise"
                : "also `" + String.join(" ", extraFlags) + "`",
            runs,
            duration,
            pods));
    List<List<String>> rows = new ArrayList<>();
    Map<String, Stats> drainBy = new LinkedHashMap<>();
    Map<String, List<Run>> byPolicy = new LinkedHashMap<>();
    for (String policy : POLICIES) {
      List<Run> rs = results.stream().filter(r -> r.policy().equals(policy)).toList();
      if (rs.isEmpty()) {
        continue;
      }
      byPolicy.put(policy, rs);
      Stats drain = Stats.of(rs.stream().map(Run::drainSeconds).toList());
      drainBy.put(policy, drain);
      rows.add(
          List.of(
              "`" + policy + "`",
              Integer.toString(rs.size()),
              drain.medianMinMax(1),
              joined(rs, r -> r.podsDisrupted() + " of " + r.podsBefore()),
              joined(rs, r -> Integer.toString(r.vmisMigrated())),
              joined(rs, r -> Integer.toString(r.vmisDeleted() + r.vmisOther())),
              joined(
                  rs,
                  r ->
                      r.migrationsCreated()
                          + " ("
                          + r.migrationsSucceeded()
                          + " succeeded, ≤ "
                          + r.peakMigrationsRunning()
                          + " at once)"),
              Stats.of(rs.stream().map(Run::recoverySeconds).toList()).medianMinMax(0)));
    }
    s.append(
        Report.table(
            List.of(
                "policy",
                "runs",
                "infra drain s",
                "guest pods disrupted (per run)",
                "VMIs migrated",
                "VMIs deleted or unmoved",
                "migrations created",
                "recovery s"),
            rows));
    s.append('\n');
    List<Run> prefer = byPolicy.get("prefer");
    if (prefer != null) {
      int worst = prefer.stream().mapToInt(Run::podsDisrupted).max().orElse(-1);
      s.append(
          Report.f(
              "- guest pods disrupted with `prefer`, most in a run: **%d** (target 0)\n", worst));
      report.verdict(
          Report.f("8. live migration, guest pods disrupted with prefer (%d VMIs)", vmis),
          Integer.toString(worst),
          "0",
          worst == 0);
    }
    Stats p = drainBy.get("prefer");
    Stats n = drainBy.get("never");
    if (p != null && n != null) {
      double ratio = p.median() / n.median();
      s.append(
          Report.f(
              "- drain time prefer / never, ratio of medians: **%.2f** (%.1f s vs %.1f s; report only, no target)\n",
              ratio, p.median(), n.median()));
      report.measured(
          Report.f("8. live migration, infra drain prefer / never (%d VMIs)", vmis),
          Report.f("%.2f: %.1f s vs %.1f s", ratio, p.median(), n.median()));
      List<Run> never = byPolicy.get("never");
      s.append("\nAs a row of docs/benchmarks.md:\n\n");
      s.append(
          Report.table(
              List.of("benchmark", "measured", "target", "verdict"),
              List.of(
                  List.of(
                      Report.f("8. infra drain of %d LiveMigratable VMIs, prefer / never", vmis),
                      Report.f(
                          "%.2f: %s vs %s, %d run(s) each; guest pods disrupted %s vs %s; VMIs migrated %s vs %s",
                          ratio,
                          p.medianMinMax(1) + " s",
                          n.medianMinMax(1) + " s",
                          prefer.size(),
                          joined(prefer, r -> Integer.toString(r.podsDisrupted())),
                          joined(never, r -> Integer.toString(r.podsDisrupted())),
                          joined(prefer, r -> Integer.toString(r.vmisMigrated())),
                          joined(never, r -> Integer.toString(r.vmisMigrated()))),
                      "pods disrupted with prefer = 0; ratio: –",
                      prefer.stream().allMatch(r -> r.podsDisrupted() == 0)
                          ? "met"
                          : "**missed**"))));
    }
    report.section(s.toString());
  }

  private static String joined(List<Run> rs, java.util.function.Function<Run, String> f) {
    return String.join(", ", rs.stream().map(f).toList());
  }
}
