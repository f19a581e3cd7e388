package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.KubeBinaries;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * {@code make bench}: speed, scale and cost of the controller and its drain CLI, each against its
 * peer measured in the same run, on real local control planes (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, kwok). Writes one Markdown report to stdout and {@code
 * target/bench/report.md}. Never part of {@code make test}; no target is asserted: a missed target
 * is reported as missed.
 */
public final class BenchMain {
  private static final Map<String, Supplier<Bench>> SECTIONS =
      Map.ofEntries(
          Map.entry("drain", () -> new DrainBench(false)),
          Map.entry("startup", StartupBench::new),
          Map.entry("evacuation", EvacuationBench::new),
          Map.entry("scale", ScaleBench::new),
          Map.entry("selector", () -> new DrainBench(true)),
          Map.entry("headofline", HeadOfLineBench::new),
          Map.entry("migration", MigrationBench::new),
          Map.entry("cost", CostBench::new),
          Map.entry("external", ExternalInfraBench::new),
          Map.entry("tenants", TenantsBench::new),
          Map.entry("shards", ShardsBench::new),
          Map.entry("aot-recording", AotRecording::new));
  private static final String ALL =
      "drain,startup,evacuation,scale,selector,headofline,migration,cost,external,tenants";

  /** Sections run only when named in bench.only: not part of a default run. */
  private static final String ON_REQUEST = "shards,aot-recording";

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    Path root = RepoPaths.root();
    Path out = Path.of(System.getProperty("bench.report", root + "/target/bench/report.md"));
    Path work = RepoPaths.workDir();
    KubeBinaries.locate();
    Report report = new Report(out, header());
    boolean failed = false;
    for (String which : Bench.strings("bench.only", ALL)) {
      try {
        Supplier<Bench> section = SECTIONS.get(which);
        if (section == null) {
          throw new IllegalArgumentException(
              "unknown benchmark " + which + " (" + ALL + "; on request: " + ON_REQUEST + ")");
        }
        section.get().in(report, work, "bench-" + which).run();
      } catch (Exception | AssertionError e) {
        failed = true;
        Bench.progress("FAILED %s: %s", which, e);
        e.printStackTrace(System.out);
        String first = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
        report.note(
            Report.f(
                "**Benchmark `%s` failed** and is missing from this report: %s: %s",
                which, e.getClass().getSimpleName(), first));
      }
    }
    report.footer(
        Report.f(
            "---\nThe benchmarks took %.1f minutes (after the build); load average at the end %s. "
                + "Logs of every process under `%s`.",
            Bench.secondsSince(Bench.STARTED) / 60,
            loadAverage(),
            root.relativize(work.toAbsolutePath())));
    System.out.println();
    System.out.println(report.render());
    System.out.println("bench: report written to " + out);
    System.exit(failed ? 1 : 0);
  }

  private static String header() throws IOException {
    Properties v = new Properties();
    try (var in = Files.newBufferedReader(RepoPaths.root().resolve("hack/versions.env"))) {
      v.load(in);
    }
    String cpu = firstLine("/proc/cpuinfo", "model name").replaceAll(".*:", "").strip();
    String memory = firstLine("/proc/meminfo", "MemTotal:").replaceAll("[^0-9]", "");
    return Report.f(
        """
        # Benchmarks (`make bench`)

        %s UTC. Machine: %d cores (%s), %s RAM, load average %s at the start (the machine may be shared: \
        numbers from a busy machine are slower, ratios against peers measured in the same run less so). \
        JDK: %s. Kubernetes %s (etcd %s, kwok %s), built from source by hack/build-k8s.sh and run as local \
        processes; kwok plays the kubelets. Each timing: median (min–max) of the runs stated. Controller jar \
        measured: %s.""",
        Instant.now().truncatedTo(ChronoUnit.SECONDS).toString().replace('T', ' ').replace("Z", ""),
        cores(),
        cpu,
        memory.isEmpty() ? "unknown" : Report.f("%.1f GiB", Long.parseLong(memory) / 1048576.0),
        loadAverage(),
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
        v.getProperty("KUBERNETES_VERSION", "?"),
        v.getProperty("ETCD_VERSION", "?"),
        v.getProperty("KWOK_VERSION", "?"),
        ControllerJar.describe());
  }

  private static String read(String file) {
    try {
      return Files.readString(Path.of(file));
    } catch (IOException e) {
      return "";
    }
  }

  /** The first line of {@code file} that starts with {@code prefix}, or "". */
  private static String firstLine(String file, String prefix) {
    return read(file).lines().filter(l -> l.startsWith(prefix)).findFirst().orElse("");
  }

  static int cores() {
    return Runtime.getRuntime().availableProcessors();
  }

  static String loadAverage() {
    String[] p = read("/proc/loadavg").split(" ");
    return p.length < 3 ? "unknown" : p[0] + " " + p[1] + " " + p[2];
  }

  /** CPU seconds the whole machine spent busy (all cores; not idle nor I/O wait), /proc/stat. */
  static double busyCpuSeconds() {
    try {
      String[] f = read("/proc/stat").lines().findFirst().orElse("").trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < Math.min(f.length, 9); i++) {
        total += Long.parseLong(f[i]);
      }
      // USER_HZ: Linux counts CPU time in ticks of 1/100 s.
      return (total - Long.parseLong(f[4]) - Long.parseLong(f[5])) / 100.0;
    } catch (RuntimeException e) {
      return -1;
    }
  }
}
