package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonObject;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.ExternalInfraWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * External infra at scale: one controller ({@code --infra-clusters=external}, the Deployment's JVM)
 * against a management API server, serving two infra API servers of many VMIs each, one tenant per
 * infra cluster (its Cluster, kubeconfig Secret and KubevirtCluster in the management cluster, its
 * infra Secret holding that infra cluster's kubeconfig). The VMIs are written directly, as {@link
 * ScaleBench} writes them; their guest nodes do not exist, so a marked VMI counts as drained at
 * once and the reaction measured is the controller's own: our PATCH of {@code
 * status.evacuationNodeName} to its delete request, seen as {@code metadata.deletionTimestamp} by a
 * watch on that infra cluster's VMIs.
 */
final class ExternalInfraBench extends Bench {
  static final String INFRA_NODE = "ext-infra-node-0";

  /** One infra cluster of the run: its API server and its tenant. */
  private record Site(String label, LocalCluster cluster, RawKube api, TenantCluster tenant) {
    String vmis() {
      return "/apis/kubevirt.io/v1/namespaces/" + tenant.namespace() + "/virtualmachineinstances";
    }

    String vmiName(int i) {
      return String.format("%s-md-%05d", tenant.name(), i);
    }
  }

  @Override
  void run() throws Exception {
    int perInfra = opts.integer("bench.external.vmis", 5000);
    int samples = opts.integer("bench.external.samples", 50);
    int warmup = 3;
    BenchMain.progress(
        "external: starting a management, two infra and a guest API server (no kwok needed)");
    List<LocalCluster> clusters =
        BenchMain.startAll(
            List.of(
                LocalCluster.builder("bench-ext-management"),
                LocalCluster.builder("bench-ext-infra-1"),
                LocalCluster.builder("bench-ext-infra-2"),
                LocalCluster.builder("bench-ext-guest")));
    try (LocalCluster management = clusters.get(0);
        LocalCluster infra1 = clusters.get(1);
        LocalCluster infra2 = clusters.get(2);
        LocalCluster guest = clusters.get(3)) {
      List<Site> sites = new ArrayList<>();
      int k = 1;
      for (LocalCluster infra : List.of(infra1, infra2)) {
        Crds.installTestCrds(infra);
        if (k == 1) {
          Crds.installTestCrds(management);
        }
        String name = "ext-tenant-" + k;
        TenantCluster t = TenantCluster.create(management, infra, guest, name, name);
        ExternalInfraWorld.bindToInfra(management, t, infra.adminKubeconfigYaml());
        sites.add(new Site("infra cluster " + k, infra, new RawKube(infra), t));
        k++;
      }
      for (Site site : sites) {
        BenchMain.progress(Report.f("external: %,d VMIs into %s", perInfra, site.label()));
        long t0 = System.nanoTime();
        BenchMain.parallel(
            perInfra,
            16,
            i ->
                RealisticVmis.create(
                    site.api(),
                    site.tenant().namespace(),
                    site.vmiName(i),
                    site.tenant().name(),
                    INFRA_NODE,
                    RealisticVmis.ip(i)));
        BenchMain.progress(
            Report.f(
                "external: %s filled in %.0f s", site.label(), (System.nanoTime() - t0) / 1e9));
      }

      java.time.Instant launched = java.time.Instant.now();
      ControllerProcess c =
          ControllerJar.start(
              "external-infra",
              work,
              List.of("--kubeconfig=" + management.kubeconfig(), "--infra-clusters=external"),
              Duration.ofMinutes(3));
      try {
        double startupMs = c.startupMs();
        double startupCpu = c.startupCpuSeconds();
        // The start-up wave: an uncordon check per Running VMI, each answered "no such node".
        ApiServerMetrics.awaitQuiet(guest, 5, Duration.ofSeconds(60));
        double syncedMs = lastSyncMs(c.log(), launched, sites.size());
        long rssKb = c.rssKb();
        long liveKb = c.liveHeapKb();
        BenchMain.progress(
            Report.f(
                "external: ready in %.0f ms (%.2f CPU s), both infra caches synced after %.0f ms,"
                    + " RSS %d MiB after sync (live heap %d MiB)",
                startupMs, startupCpu, syncedMs, rssKb / 1024, liveKb / 1024));
        Map<String, List<Double>> latencies = latency(sites, warmup, samples);
        write(perInfra, startupMs, startupCpu, syncedMs, rssKb, liveKb, latencies, sites);
      } finally {
        c.close();
      }
    }
  }

  /**
   * Milliseconds from {@code launched} to the last of the {@code pipelines} "infra pipeline synced"
   * lines of the controller's log (their timestamps: /readyz waits for the management caches only,
   * so this is when every infra cluster's VMIs are cached); NaN if fewer were logged.
   */
  private static double lastSyncMs(Path log, java.time.Instant launched, int pipelines)
      throws java.io.IOException {
    List<java.time.Instant> synced =
        java.nio.file.Files.readAllLines(log).stream()
            .filter(l -> l.contains("infra pipeline synced"))
            .map(l -> java.time.Instant.parse(l.substring(0, l.indexOf(' '))))
            .toList();
    if (synced.size() < pipelines) {
      return Double.NaN;
    }
    return java.time.Duration.between(launched, java.util.Collections.max(synced)).toNanos() / 1e6;
  }

  /**
   * Marks one VMI at a time, alternating between the infra clusters, and times each mark to the
   * delete request seen on that infra cluster.
   */
  private Map<String, List<Double>> latency(List<Site> sites, int warmup, int samples)
      throws Exception {
    Map<String, Long> deletedAt = new ConcurrentHashMap<>();
    List<AutoCloseable> watches = new ArrayList<>();
    Map<String, List<Double>> out = new java.util.LinkedHashMap<>();
    try {
      for (Site site : sites) {
        watches.add(
            site.api()
                .watchResuming(
                    site.vmis(),
                    (type, vmi, at) -> {
                      JsonObject meta = vmi.getAsJsonObject("metadata");
                      if ("DELETED".equals(type) || meta.has("deletionTimestamp")) {
                        deletedAt.putIfAbsent(
                            site.label() + "/" + meta.get("name").getAsString(), at);
                      }
                    },
                    () -> {}));
        out.put(site.label(), new ArrayList<>());
      }
      BenchMain.progress(
          "external: reaction latency, "
              + samples
              + " samples per infra cluster (after "
              + warmup
              + " untimed)");
      for (int i = 0; i < warmup + samples; i++) {
        for (Site site : sites) {
          String name = site.vmiName(i);
          double ms =
              RealisticVmis.markAndTime(
                  site.api(),
                  site.vmis() + "/" + name,
                  INFRA_NODE,
                  deletedAt,
                  site.label() + "/" + name);
          if (i >= warmup) {
            out.get(site.label()).add(ms);
          }
          Thread.sleep(100);
        }
      }
    } finally {
      for (AutoCloseable w : watches) {
        w.close();
      }
    }
    out.forEach(
        (label, l) -> {
          Stats s = Stats.of(l);
          BenchMain.progress(
              Report.f(
                  "external: %s reaction p50 %.0f ms, p99 %.0f ms",
                  label, s.percentile(50), s.percentile(99)));
        });
    return out;
  }

  private void write(
      int perInfra,
      double startupMs,
      double startupCpu,
      double syncedMs,
      long rssKb,
      long liveKb,
      Map<String, List<Double>> latencies,
      List<Site> sites) {
    StringBuilder s = new StringBuilder("## 10. External infra: two infra clusters\n\n");
    s.append(
        Report.f(
            "One controller, `--infra-clusters=external`, started from its jar with the Deployment's JVM (`%s`) "
                + "against a management API server holding two tenants' Cluster, kubeconfig Secret, KubevirtCluster "
                + "and infra Secret; each tenant's %,d VMIs (shaped like CAPK's) in its own infra API server, all "
                + "matching the controller's selector. Start-up: process start to the first `/readyz` 200 and the CPU "
                + "time used until then (`/readyz` waits for the management cluster's caches only), and process "
                + "start to the later of the two infra pipelines' \"synced\" log lines (their VMIs cached, its "
                + "workers started). Memory: RSS (`/proc/PID/status` VmRSS) and live heap after a full GC, once "
                + "the start-up wave (one uncordon check per Running VMI) had gone quiet. Reaction: our PATCH of "
                + "`status.evacuationNodeName` on one VMI to the controller's delete request, seen as "
                + "`metadata.deletionTimestamp` by a watch on that infra cluster's VMIs; the guest nodes do not "
                + "exist, so each marked VMI counts as drained at once; one evacuation at a time, alternating "
                + "between the infra clusters, 3 untimed first.\n\n",
            DeploymentJvm.describeDeployed(), perInfra));
    s.append(
        Report.table(
            "VMIs watched|start-up to /readyz ms|start-up CPU s|to both infra caches synced ms|RSS MiB|live heap MiB",
            List.of(
                List.of(
                    Report.f("%,d (2 × %,d)", 2 * perInfra, perInfra),
                    Report.f("%.0f", startupMs),
                    Report.f("%.2f", startupCpu),
                    Double.isNaN(syncedMs) ? "not logged" : Report.f("%.0f", syncedMs),
                    Report.f("%d", rssKb / 1024),
                    Report.f("%d", liveKb / 1024)))));
    s.append("\n");
    List<List<String>> rows = new ArrayList<>();
    for (Site site : sites) {
      Stats lat = Stats.of(latencies.get(site.label()));
      rows.add(
          List.of(
              site.label(),
              Report.f("%,d", perInfra),
              Integer.toString(lat.n()),
              Report.f("%.0f", lat.percentile(50)),
              Report.f("%.0f", lat.percentile(99)),
              Report.f("%.0f", lat.min()),
              Report.f("%.0f", lat.max())));
      report.measured(
          "10. external infra reaction p50 / p99, " + site.label(),
          Report.f("%.0f / %.0f ms", lat.percentile(50), lat.percentile(99)));
    }
    s.append(Report.table("infra cluster|VMIs|samples|p50 ms|p99 ms|min ms|max ms", rows));
    report.measured(
        Report.f("10. external infra RSS, 2 × %,d VMIs", perInfra),
        Report.f("%d MiB", rssKb / 1024));
    report.measured(
        Report.f("10. external infra start-up to /readyz, 2 × %,d VMIs", perInfra),
        Report.f("%.2f s", startupMs / 1000));
    report.section(s.toString());
  }
}
