package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.ExternalInfraWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Benchmark 10: one controller at {@code --infra-clusters=external}, two infra clusters. */
final class ExternalInfraBench extends Bench {
  static final String INFRA_NODE = "ext-infra-node-0";

  @Override
  void run() throws Exception {
    int perInfra = Integer.getInteger("bench.external.vmis", 5000);
    int samples = Integer.getInteger("bench.external.samples", 50);
    progress("external: starting a management, two infra and a guest API server (no kwok needed)");
    List<LocalCluster> clusters =
        startAll(
            List.of(
                LocalCluster.builder("bench-ext-management"),
                LocalCluster.builder("bench-ext-infra-1"),
                LocalCluster.builder("bench-ext-infra-2"),
                LocalCluster.builder("bench-ext-guest")));
    try {
      LocalCluster management = clusters.get(0);
      LocalCluster guest = clusters.get(3);
      Crds.installTestCrds(management);
      List<RealisticVmis.Numbered> sites = new ArrayList<>();
      for (int k = 1; k <= 2; k++) {
        LocalCluster infra = clusters.get(k);
        Crds.installTestCrds(infra);
        TenantCluster t =
            TenantCluster.create(management, infra, guest, "ext-tenant-" + k, "ext-tenant-" + k);
        ExternalInfraWorld.bindToInfra(management, t, infra.adminKubeconfigYaml());
        progress("external: %,d VMIs into infra cluster %d", perInfra, k);
        long t0 = System.nanoTime();
        sites.add(new RealisticVmis.Numbered(new RawKube(infra), t.namespace(), t.name()));
        sites.get(k - 1).create(INFRA_NODE, 0, perInfra);
        progress("external: infra cluster %d filled in %.0f s", k, secondsSince(t0));
      }
      Instant launched = Instant.now();
      List<String> flags =
          List.of("--kubeconfig=" + management.kubeconfig(), "--infra-clusters=external");
      try (ControllerProcess c =
          ControllerJar.start("external-infra", work, flags, Duration.ofMinutes(3))) {
        // The start-up wave: an uncordon check per Running VMI, each answered "no such node".
        awaitQuiet(
            () -> Metrics.nonWatch(guest), 5, Duration.ofSeconds(10), Duration.ofSeconds(60));
        double syncedMs = lastSyncMs(c.log(), launched, sites.size());
        long rssKb = c.rssKb();
        long liveKb = c.liveHeapKb();
        progress("external: ready in %.0f ms, RSS %d MiB after sync", c.startupMs(), rssKb / 1024);
        write(perInfra, c, syncedMs, rssKb, liveKb, latency(sites, 3, samples));
      }
    } finally {
      clusters.forEach(LocalCluster::close);
    }
  }

  /**
   * Milliseconds from {@code launched} to the last of the {@code pipelines} "infra pipeline synced"
   * lines of the controller's log (/readyz waits for the management caches only, so this is when
   * every infra cluster's VMIs are cached); NaN if fewer were logged.
   */
  private static double lastSyncMs(Path log, Instant launched, int pipelines) throws Exception {
    List<Instant> synced =
        Files.readAllLines(log).stream()
            .filter(l -> l.contains("infra pipeline synced"))
            .map(l -> Instant.parse(l.substring(0, l.indexOf(' '))))
            .toList();
    return synced.size() < pipelines
        ? Double.NaN
        : (AuditLog.epoch(Collections.max(synced)) - AuditLog.epoch(launched)) * 1000;
  }

  /**
   * Marks one VMI at a time, alternating between the infra clusters, and times each mark to the
   * delete request seen on that infra cluster.
   */
  private List<Stats> latency(List<RealisticVmis.Numbered> sites, int warmup, int samples)
      throws Exception {
    Map<String, Long> deletedAt = new ConcurrentHashMap<>();
    List<AutoCloseable> watches = new ArrayList<>();
    try {
      for (RealisticVmis.Numbered site : sites) {
        watches.add(site.api().watchResuming(site.path(), RawKube::deleted, deletedAt, () -> {}));
      }
      progress("external: reaction latency, %d samples per infra cluster", samples);
      return RealisticVmis.reactionTimes(sites, INFRA_NODE, deletedAt, warmup, samples, 100);
    } finally {
      for (AutoCloseable w : watches) {
        w.close();
      }
    }
  }

  private void write(
      int perInfra,
      ControllerProcess c,
      double syncedMs,
      long rssKb,
      long liveKb,
      List<Stats> latencies) {
    List<List<String>> rows = new ArrayList<>();
    for (int k = 0; k < latencies.size(); k++) {
      Stats lat = latencies.get(k);
      String label = "infra cluster " + (k + 1);
      rows.add(Report.row(label, perInfra, lat.n(), lat.cells("%.0f", "p50", "p99", "min", "max")));
      report.measured(
          "10. external infra reaction p50 / p99, " + label,
          Report.f("%.0f / %.0f ms", lat.percentile(50), lat.percentile(99)));
    }
    report.measured(
        Report.f("10. external infra RSS, 2 × %,d VMIs", perInfra),
        Report.f("%d MiB", rssKb / 1024));
    report.measured(
        Report.f("10. external infra start-up to /readyz, 2 × %,d VMIs", perInfra),
        Report.f("%.2f s", c.startupMs() / 1000));
    report.section(
        Report.f(
                "## 10. External infra: two infra clusters\n\n"
                    + "One controller, `--infra-clusters=external`, with the Deployment's JVM (`%s`), against a "
                    + "management API server holding two tenants' Cluster, kubeconfig Secret, KubevirtCluster and "
                    + "infra Secret; each tenant's %,d VMIs (shaped like CAPK's) in its own infra API server. "
                    + "/readyz waits for the management caches only; \"synced\": the later infra pipeline's log "
                    + "line. Memory once the start-up wave went quiet. Reaction: our PATCH of "
                    + "`status.evacuationNodeName` to a watch on its infra cluster seeing the VMI deleted (no guest "
                    + "nodes: instant drain); one at a time, alternating, 3 untimed first.\n\n",
                ControllerJar.describeDeployed(), perInfra)
            + Report.table(
                "VMIs watched|start-up to /readyz ms|start-up CPU s|to both infra caches synced ms|RSS MiB|live heap MiB",
                List.of(
                    Report.row(
                        Report.f("%,d (2 × %,d)", 2 * perInfra, perInfra),
                        Report.f("%.0f", c.startupMs()),
                        Report.f("%.2f", c.startupCpuSeconds()),
                        Double.isNaN(syncedMs) ? "not logged" : Report.f("%.0f", syncedMs),
                        rssKb / 1024,
                        liveKb / 1024)))
            + "\n"
            + Report.table("infra cluster|VMIs|samples|p50 ms|p99 ms|min ms|max ms", rows));
  }
}
