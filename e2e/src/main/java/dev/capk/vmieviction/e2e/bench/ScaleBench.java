package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

/** Benchmarks 3, 4 and 6 on one infra API server of many VMIs: reaction, memory, start-up. */
final class ScaleBench extends Bench {
  static final String NAMESPACE = "scale";
  static final String CLUSTER = "scale-tenant";
  static final String INFRA_NODE = "scale-infra-0";

  /** A larger heap, to learn what the controller needs when the Deployment's is not enough. */
  static final JvmConfig BIG_HEAP =
      new JvmConfig("-Xmx1g -XX:+UseSerialGC", Map.of(), List.of("-Xmx1g", "-XX:+UseSerialGC"));

  private LocalCluster infra;
  private LocalCluster guest;
  private Stats latencies = Stats.of(List.of());
  private int vmiBytes;
  private int vmiBytesWithoutManagedFields;
  private final List<MemoryRun> memory = new ArrayList<>();

  /** One start: what {@link #measureMemory} read, or why it never got ready (RSS: its peak). */
  record MemoryRun(
      int vmis,
      String jvm,
      String neverReady,
      double startupMs,
      double startupCpuSeconds,
      long rssKb,
      long heapKb,
      String heapSource,
      long liveHeapKb,
      double wave,
      double waveSeconds) {
    static MemoryRun failed(int vmis, String jvm, ControllerProcess.NotReady e) {
      String oom = e.outOfMemory ? "OutOfMemoryError (Java heap space); " : "";
      String why = Report.f("%snot ready after %.0f s", oom, e.waitedSeconds);
      return new MemoryRun(vmis, jvm, why, 0, 0, e.peakRssKb, 0, "", 0, 0, 0);
    }
  }

  /** A controller JVM to measure: its environment and flags; {@code label} names it. */
  record JvmConfig(String label, Map<String, String> env, List<String> flags) {}

  /**
   * The Deployment's JVM first; then any given by {@code -Dbench.scale.jvms="A|B"} (each "NAME=v
   * ... -flags ...": leading NAME=value tokens are environment), measured the same way in the same
   * run, e.g. the flags before a change.
   */
  static List<JvmConfig> configs() {
    List<JvmConfig> configs = new ArrayList<>();
    configs.add(
        new JvmConfig(ControllerJar.describeDeployed(), ControllerJar.ENV, ControllerJar.JVM));
    for (String spec : System.getProperty("bench.scale.jvms", "").split("\\|")) {
      Map<String, String> env = new LinkedHashMap<>();
      List<String> flags = new ArrayList<>();
      for (String t : spec.strip().split("\\s+")) {
        if (flags.isEmpty() && t.matches("[A-Z_][A-Z0-9_]*=.*")) {
          env.put(t.split("=", 2)[0], t.split("=", 2)[1]);
        } else if (!t.isEmpty()) {
          flags.add(t);
        }
      }
      if (!spec.isBlank()) {
        configs.add(new JvmConfig(ControllerJar.describe(env, flags), env, flags));
      }
    }
    return configs;
  }

  @Override
  void run() throws Exception {
    List<Integer> counts = ints("bench.scale.counts", "1000,10000");
    int samples = Integer.getInteger("bench.latency.samples", 100);
    int warmup = 3;
    List<LocalCluster> clusters = startClusters("scale", 1, null, null, false);
    try (LocalCluster infra = this.infra = clusters.get(0);
        LocalCluster guest = this.guest = clusters.get(1)) {
      Crds.installTestCrds(infra);
      TenantCluster.create(infra, guest, CLUSTER, NAMESPACE);
      RawKube infraApi = new RawKube(infra);
      RealisticVmis.Numbered vmis = new RealisticVmis.Numbered(infraApi, NAMESPACE, CLUSTER);
      progress("scale: %d kwok guest nodes named like VMIs", samples + warmup);
      parallel(
          samples + warmup,
          8,
          i ->
              guest
                  .kwokNodes()
                  .createNamed(vmis.name(i), Map.of("node-role.kubernetes.io/worker", "")));
      int created = 0;
      try {
        for (int target : counts) {
          progress("scale: creating VMIs %d..%d", created, target - 1);
          long t0 = System.nanoTime();
          vmis.create(INFRA_NODE, created, target);
          created = target;
          progress("scale: %d VMIs created in %.0f s", created, secondsSince(t0));
          String one = infraApi.get(vmis.path() + "/" + vmis.name(created - 1));
          vmiBytes = one.getBytes(StandardCharsets.UTF_8).length;
          JsonObject trimmed = JsonParser.parseString(one).getAsJsonObject();
          trimmed.getAsJsonObject("metadata").remove("managedFields");
          vmiBytesWithoutManagedFields = trimmed.toString().getBytes(StandardCharsets.UTF_8).length;
          int runs = runs("bench.scale.runs." + target, target >= 10_000 ? 3 : 5);
          List<JvmConfig> configs = configs();
          // Interleaved (run 1 of every configuration, then run 2, ...): load from other work on
          // the machine then weighs on each configuration alike.
          List<JvmConfig> failed = new ArrayList<>();
          for (int r = 0; r < runs; r++) {
            for (JvmConfig config : configs) {
              if (failed.contains(config)) {
                continue;
              }
              String name = "scale-" + target + "-" + r + "-jvm" + configs.indexOf(config);
              boolean timed = target == counts.get(0) && r == runs - 1 && config == configs.get(0);
              if (!measure(
                  target, name, config, () -> timed ? latency(vmis, warmup, samples) : null)) {
                failed.add(config); // and once more with a larger heap:
                measure(target, "scale-" + target + "-bigheap", BIG_HEAP, () -> null);
              }
            }
          }
        }
      } finally {
        write(counts);
      }
    }
  }

  /**
   * Starts a controller on {@code config}'s JVM, records its {@link MemoryRun} (or that it never
   * got ready) and then calls {@code meanwhile} while it runs; returns whether it got ready.
   */
  private boolean measure(int target, String name, JvmConfig config, Callable<?> meanwhile)
      throws Exception {
    // Requests a second the guest API server gets without the controller (kwok's heartbeats).
    double before = Metrics.nonWatch(guest);
    long t = System.nanoTime();
    ControllerProcess.sleep(3000);
    double baseline = Math.max(0, (Metrics.nonWatch(guest) - before - 1) / secondsSince(t));
    List<String> flags = List.of("--kubeconfig=" + infra.kubeconfig());
    try (ControllerProcess c =
        ControllerJar.start(
            name, work, config.env(), config.flags(), flags, Duration.ofMinutes(3))) {
      progress("scale: %s: %s", name, measureMemory(c, guest, target, baseline, config.label()));
      meanwhile.call();
      return true;
    } catch (ControllerProcess.NotReady e) {
      progress("scale: %s: never ready (%s)", name, e.getMessage());
      memory.add(MemoryRun.failed(target, config.label(), e));
      return false;
    }
  }

  /**
   * RSS and heap once the informer has synced and the start-up wave of reconciles (one per cached
   * VMI) has passed, watched on the guest API server (the only one it talks to besides the infra
   * server, beyond its baseline and the read's own request); recorded in {@link #memory}.
   */
  private MemoryRun measureMemory(
      ControllerProcess c, LocalCluster guest, int vmis, double baselinePerSecond, String jvm)
      throws Exception {
    Duration cap = Duration.ofSeconds(Integer.getInteger("bench.scale.settleCapSeconds", 30));
    Quiet q =
        awaitQuiet(
            () -> Metrics.nonWatch(guest), baselinePerSecond + 6, Duration.ofSeconds(10), cap);
    long rss = c.rssKb();
    ControllerProcess.HeapReading heap = c.heapUsedKb();
    long live = c.liveHeapKb();
    double elapsed = secondsSince(q.startNanos());
    double wave = Math.max(0, q.last() - q.before() - elapsed - baselinePerSecond * elapsed);
    MemoryRun m =
        new MemoryRun(
            vmis,
            jvm,
            null,
            c.startupMs(),
            c.startupCpuSeconds(),
            rss,
            heap.kb(),
            heap.source(),
            live,
            wave,
            (q.quietSinceNanos() - q.startNanos()) / 1e9);
    memory.add(m);
    return m;
  }

  /**
   * Sets status.evacuationNodeName on one VMI at a time and times until its guest node is cordoned.
   */
  private Stats latency(RealisticVmis.Numbered vmis, int warmup, int samples) throws Exception {
    Map<String, Long> cordonedAt = new ConcurrentHashMap<>();
    try (AutoCloseable w =
        new RawKube(guest)
            .watchResuming(
                "/api/v1/nodes",
                (type, node) -> "true".equals(RawKube.str(node, "spec", "unschedulable")),
                cordonedAt,
                () -> {})) {
      progress("scale: reaction latency, %d samples (after %d untimed)", samples, warmup);
      // One evacuation at a time: the next starts after this one's drain and delete.
      return latencies =
          RealisticVmis.reactionTimes(List.of(vmis), INFRA_NODE, cordonedAt, warmup, samples, 200)
              .get(0);
    }
  }

  private List<MemoryRun> runsOf(int count, String jvm, boolean ready) {
    return memory.stream()
        .filter(m -> m.vmis() == count && m.jvm().equals(jvm) && ready == (m.neverReady() == null))
        .toList();
  }

  private void write(List<Integer> counts) {
    Stats lat = latencies;
    report.atMost(
        "3. reaction latency p99, 1,000 VMIs", "%.0f ms", lat.percentile(99), "≤ 200 ms", 200);
    String deployed = ControllerJar.describeDeployed();
    List<List<String>> rows = new ArrayList<>();
    List<String> jvms = new ArrayList<>(configs().stream().map(JvmConfig::label).toList());
    jvms.add(BIG_HEAP.label());
    for (int count : counts) {
      for (String jvm : jvms) {
        for (MemoryRun f : runsOf(count, jvm, false)) {
          String peak = Report.f("peak %d", f.rssKb() / 1024);
          rows.add(
              Report.row(
                  count, "`" + jvm + "`", 1, "**never ready**: " + f.neverReady(), "", peak));
        }
        List<MemoryRun> runs = runsOf(count, jvm, true);
        if (!runs.isEmpty()) {
          rows.add(
              Report.row(
                  count,
                  "`" + jvm + "`",
                  runs.size(),
                  Stats.over(runs, MemoryRun::startupMs).medianMinMax(0),
                  Stats.over(runs, MemoryRun::startupCpuSeconds).medianMinMax(2),
                  Stats.over(runs, m -> m.rssKb() / 1024.0).medianMinMax(0),
                  Stats.over(runs, m -> m.heapKb() / 1024.0).medianMinMax(0),
                  Stats.over(runs, m -> m.liveHeapKb() / 1024.0).medianMinMax(0),
                  Stats.over(runs, MemoryRun::wave).medianMinMax(0),
                  Stats.over(runs, MemoryRun::waveSeconds).medianMinMax(0)));
        }
      }
      Stats rss = Stats.over(runsOf(count, deployed, true), m -> m.rssKb() / 1024.0);
      Stats start = Stats.over(runsOf(count, deployed, true), MemoryRun::startupMs);
      if (count == 10_000) {
        Optional<MemoryRun> failed = runsOf(count, deployed, false).stream().findFirst();
        String bigHeap =
            runsOf(count, BIG_HEAP.label(), true).stream()
                .findFirst()
                .map(m -> Report.f("; with `%s`: %d MiB RSS", m.jvm(), m.rssKb() / 1024))
                .orElse("");
        report.verdict(
            "4. RSS with 10,000 VMIs",
            failed
                .map(f -> "never ready with the Deployment's heap: " + f.neverReady() + bigHeap)
                .orElse(Report.f("%.0f MiB", rss.median())),
            "≤ 160 MiB",
            failed.isEmpty() && rss.median() <= 160);
      }
      if (count == 1_000) {
        report.atMost(
            "6. start-up to /readyz, 1,000 VMIs", "%.2f s", start.median() / 1000, "≤ 1.0 s", 1.0);
      }
    }
    report.section(
        "## 3. Reaction latency\n\nOur PATCH of `status.evacuationNodeName` on one VMI to a watch on"
            + " the guest's nodes seeing its node cordoned; one at a time, 3 untimed first.\n\n"
            + Report.table(
                "watched VMIs|samples|p50 ms|p99 ms|min ms|max ms",
                List.of(
                    Report.row(
                        counts.get(0), lat.n(), lat.cells("%.0f", "p50", "p99", "min", "max"))))
            + Report.f(
                """

                ## 4. Memory and 6. start-up

                VMIs shaped as KubeVirt writes them, %,d bytes of JSON each (%,d without managedFields), one \
                namespace, all selected. The Deployment's JVM (`%s`), then those of `-Dbench.scale.jvms`, runs \
                interleaved, and `-Xmx1g` once where one never got ready. Start-up: to the first `/readyz` 200 \
                (polled every 10 ms), and its CPU. Memory once the start-up wave (an uncordon check per Running \
                VMI: the guest's `apiserver_request_total` minus kwok's rate) went quiet, at most 30 s: VmRSS, \
                heap used (%s), live heap after `jcmd GC.run`. Median (min–max) of the runs.

                """,
                vmiBytes,
                vmiBytesWithoutManagedFields,
                deployed,
                memory.isEmpty() ? "" : memory.get(0).heapSource())
            + Report.table(
                "VMIs|controller JVM|runs|start-up ms|start-up CPU s|RSS MiB|heap used MiB|live heap MiB|start-up wave: guest API requests|wave s",
                rows));
  }
}
