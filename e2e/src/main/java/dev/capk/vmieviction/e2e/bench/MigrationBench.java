package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Benchmark 8, live migration (issue 16): an infra drain at {@code prefer} against {@code never}.
 */
final class MigrationBench extends Bench {
  private static final String NS = "mig";
  private static final String KUBEVIRT = "/apis/kubevirt.io/v1/";
  private static final List<String> POLICIES = List.of("prefer", "never");
  private static final String RESULT_ANNOTATION = "standin.kubevirt.io/migration-result";
  private static final String DURATION_ANNOTATION = "standin.kubevirt.io/migration-duration";

  /**
   * One timed drain under one policy, and its cells: guest pods disrupted, VMIs migrated, VMIs
   * deleted or unmoved, migrations created.
   */
  record Run(String policy, DrainWorld.Drained d, int podsDisrupted, List<String> cells) {}

  @Override
  void run() throws Exception {
    int tenantsCount = Integer.getInteger("bench.migration.tenants", 2);
    int vmisPerTenant = Integer.getInteger("bench.migration.vmisPerTenant", 10);
    int pods = Integer.getInteger("bench.migration.pods", 3);
    String duration = System.getProperty("bench.migration.duration", "1");
    int runs = runs("bench.migration.runs", 2);
    List<String> policies = strings("bench.migration.policies", String.join(",", POLICIES));
    // More controller flags for both policies, e.g.
    // -Dbench.migration.flags=--drain-retry-interval=5s
    List<String> extraFlags = strings("bench.migration.flags", "");
    List<LocalCluster> clusters = startClusters("mig", tenantsCount, null, null, true);
    LocalCluster infra = clusters.get(0);
    List<DrainWorld> worlds = new ArrayList<>();
    try {
      int vmis = tenantsCount * vmisPerTenant;
      progress(
          "migration: creating %d VMs, their guest nodes and %d pods per guest node", vmis, pods);
      DrainWorld w =
          new DrainWorld(infra, clusters.subList(1, clusters.size()), NS, vmis, pods, false);
      worlds.add(w);
      w.keepsUids = true;
      w.alsoSettled = () -> unfinished(w) == 0;
      List<Run> results = new ArrayList<>();
      for (int r = 0; r < runs; r++) {
        for (String policy : policies) {
          prepare(w, duration);
          List<String> flags =
              concat(
                  List.of("--kubeconfig=" + infra.kubeconfig(), "--live-migration=" + policy),
                  extraFlags);
          String name = "migration-" + policy + "-run" + (r + 1);
          try (ControllerProcess c =
              ControllerJar.start(name, work, flags, Duration.ofMinutes(2))) {
            // After a start the controller looks at every Running VMI once; let that pass first.
            Thread.sleep(3000);
            Run run = runOnce(w, policy, c.pid());
            results.add(run);
            progress("migration: %s, run %d: %s", policy, r + 1, run);
          }
        }
      }
      write(results, runs, tenantsCount, vmisPerTenant, pods, duration, extraFlags);
    } finally {
      DrainWorld.closeAll(worlds, clusters);
    }
  }

  /**
   * Makes every VMI LiveMigratable, as virt-controller reports it (the status condition), with a
   * stand-in migration that succeeds after {@code duration} seconds. A VMI recreated by a run under
   * never is a new object without either, so every run sets them again.
   */
  private static void prepare(DrainWorld w, String duration) throws Exception {
    for (JsonObject vmi : w.infraApi.items(KUBEVIRT + "virtualmachineinstances")) {
      String path =
          KUBEVIRT
              + "namespaces/%s/virtualmachineinstances/%s"
                  .formatted(
                      RawKube.str(vmi, "metadata", "namespace"),
                      RawKube.str(vmi, "metadata", "name"));
      w.infraApi.mergePatch(
          path,
          Report.f(
              "{\"metadata\":{\"annotations\":{\"%s\":\"succeed\",\"%s\":\"%s\"}}}",
              RESULT_ANNOTATION, DURATION_ANNOTATION, duration));
      JsonObject status = vmi.getAsJsonObject("status");
      JsonArray conditions =
          status != null && status.has("conditions")
              ? status.getAsJsonArray("conditions")
              : new JsonArray();
      conditions.asList().removeIf(c -> "LiveMigratable".equals(RawKube.str(c, "type")));
      conditions.add(JsonParser.parseString("{\"type\":\"LiveMigratable\",\"status\":\"True\"}"));
      w.infraApi.mergePatch(path + "/status", "{\"status\":{\"conditions\":" + conditions + "}}");
    }
  }

  private static Set<String> podUids(DrainWorld w) throws Exception {
    Set<String> out = new HashSet<>();
    for (LocalCluster g : w.guests) {
      new RawKube(g)
          .items("/api/v1/namespaces/" + NS + "/pods")
          .forEach(p -> out.add(RawKube.str(p, "metadata", "uid")));
    }
    return out;
  }

  /** Every migration object, by UID, with its phase ("" when none yet). */
  private static Map<String, String> migrations(DrainWorld w) throws Exception {
    Map<String, String> out = new HashMap<>();
    for (JsonObject m : w.infraApi.items(KUBEVIRT + "virtualmachineinstancemigrations")) {
      out.put(
          RawKube.str(m, "metadata", "uid"),
          Objects.toString(RawKube.str(m, "status", "phase"), ""));
    }
    return out;
  }

  private static int unfinished(DrainWorld w) throws Exception {
    return (int)
        migrations(w).values().stream()
            .filter(p -> !p.equals("Succeeded") && !p.equals("Failed"))
            .count();
  }

  /**
   * One timed drain of the node holding the VMIs, then the wait until all run on the other one with
   * their guest nodes and pods back; counts what the run did.
   */
  private static Run runOnce(DrainWorld w, String policy, long controllerPid) throws Exception {
    Map<String, String> nodesBefore = w.vmis("status", "nodeName");
    Set<String> podsBefore = podUids(w);
    Set<String> migrationsBefore = migrations(w).keySet();
    // Migrations not finished, polled while the drain lasts: KubeVirt's limits at work.
    AtomicInteger peak = new AtomicInteger();
    DrainWorld.Drained d;
    try (AutoCloseable poll =
        sampling(250, () -> peak.accumulateAndGet(unfinished(w), Math::max))) {
      d = w.drain(controllerPid, false, null);
    }
    Map<String, String> uidsAfter = w.vmis("metadata", "uid");
    Map<String, String> nodesAfter = w.vmis("status", "nodeName");
    long migrated =
        d.before().keySet().stream()
            .filter(n -> d.before().get(n).equals(uidsAfter.get(n)))
            .filter(n -> !String.valueOf(nodesAfter.get(n)).equals(nodesBefore.get(n)))
            .count();
    Set<String> podsAfter = podUids(w);
    int disrupted = (int) podsBefore.stream().filter(u -> !podsAfter.contains(u)).count();
    Map<String, String> created = new HashMap<>(migrations(w));
    created.keySet().removeAll(migrationsBefore);
    long succeeded = created.values().stream().filter("Succeeded"::equals).count();
    return new Run(
        policy,
        d,
        disrupted,
        List.of(
            disrupted + " of " + podsBefore.size(),
            Long.toString(migrated),
            Long.toString(d.before().size() - migrated),
            Report.f("%d (%d succeeded, ≤ %d at once)", created.size(), succeeded, peak.get())));
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
    String intro =
        Report.f(
            "## 8. Live migration: infra drain, prefer vs never\n\n"
                + "The real `kubectl drain %s` of an infra node holding %d LiveMigratable External VMIs, %d in each "
                + "of %d tenant clusters, the controller at `--live-migration=prefer` and `never` (%s), %d run(s) "
                + "each, alternating. Under prefer the stand-in completes each migration after %s s (UID kept; it "
                + "has no parallel limit, so \"at once\" shows the controller keeping to KubeVirt's 2 outbound per "
                + "node); under never the VMI is drained, deleted and recreated. %d pods per guest node (pinned "
                + "Deployment), no budget. Pods disrupted: present before, gone once all is back; migrated: same "
                + "UID, other node; at once: unfinished migrations polled every 0.25 s.\n\n",
            String.join(" ", DrainBench.FLAGS.subList(0, 3)),
            vmis,
            vmisPerTenant,
            tenantsCount,
            extraFlags.isEmpty()
                ? "default flags otherwise"
                : "also `" + String.join(" ", extraFlags) + "`",
            runs,
            duration,
            pods);
    List<List<String>> rows = new ArrayList<>();
    Map<String, List<Run>> byPolicy = new TreeMap<>(Comparator.comparing(POLICIES::indexOf));
    results.forEach(r -> byPolicy.computeIfAbsent(r.policy(), p -> new ArrayList<>()).add(r));
    byPolicy.forEach(
        (policy, rs) ->
            rows.add(
                Report.row(
                    "`" + policy + "`",
                    rs.size(),
                    Stats.over(rs, r -> r.d().drainSeconds()).medianMinMax(1),
                    IntStream.range(0, 4)
                        .mapToObj(k -> rs.stream().map(r -> r.cells().get(k)))
                        .map(c -> c.collect(Collectors.joining(", ")))
                        .toList(),
                    Stats.over(rs, r -> r.d().recoverySeconds()).medianMinMax(0))));
    report.section(
        intro
            + Report.table(
                "policy|runs|infra drain s|guest pods disrupted (per run)|VMIs migrated|VMIs deleted or unmoved|migrations created|recovery s",
                rows));
    List<Run> prefer = byPolicy.get("prefer");
    List<Run> never = byPolicy.get("never");
    if (prefer != null) {
      int worst = prefer.stream().mapToInt(Run::podsDisrupted).max().orElse(-1);
      report.verdict(
          Report.f("8. live migration, guest pods disrupted with prefer (%d VMIs)", vmis),
          Integer.toString(worst),
          "0",
          worst == 0);
    }
    if (prefer != null && never != null) {
      Stats p = Stats.over(prefer, r -> r.d().drainSeconds());
      Stats n = Stats.over(never, r -> r.d().drainSeconds());
      report.measured(
          Report.f("8. live migration, infra drain prefer / never (%d VMIs)", vmis),
          Report.f(
              "%.2f: %s s vs %s s", p.median() / n.median(), p.medianMinMax(1), n.medianMinMax(1)));
    }
  }
}
