package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.KubeBinaries;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code make bench}: speed, scale and cost of the controller and its drain CLI, each against its
 * peer measured in the same run, on real local control planes (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, kwok). Writes one Markdown report to stdout and {@code
 * target/bench/report.md}. Never part of {@code make test}; no target is asserted: a missed target
 * is reported as missed.
 */
public final class BenchMain {
  private static final long STARTED = System.nanoTime();

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    BenchOptions opts = new BenchOptions();
    Path root = RepoPaths.root();
    Path out =
        Path.of(
            System.getProperty("bench.report", root.resolve("target/bench/report.md").toString()));
    Path work = RepoPaths.workDir();
    KubeBinaries.locate();
    Report report = new Report(out, header());
    boolean failed = false;
    for (String which : opts.only()) {
      try {
        switch (which) {
          case "drain" -> new DrainBench(report, opts, work).run();
          case "startup" -> new StartupBench(report, opts, work).run();
          case "evacuation" -> new EvacuationBench(report, opts, work).run();
          case "scale" -> new ScaleBench(report, opts, work).run();
          case "selector" -> new SelectorDrainBench(report, opts, work).run();
          case "headofline" -> new HeadOfLineBench(report, opts, work).run();
          case "migration" -> new MigrationBench(report, opts, work).run();
          case "cost" -> new CostBench(report, opts, work).run();
          case "external" -> new ExternalInfraBench(report, opts, work).run();
          default ->
              throw new IllegalArgumentException(
                  "unknown benchmark "
                      + which
                      + " (drain, startup, evacuation, scale, selector, headofline, migration, cost, external)");
        }
      } catch (Exception | AssertionError e) {
        failed = true;
        progress("FAILED " + which + ": " + e);
        e.printStackTrace(System.out);
        report.note(
            "**Benchmark `" + which + "` failed** and is missing from this report: " + oneLine(e));
      }
    }
    double minutes = (System.nanoTime() - STARTED) / 60e9;
    report.footer(
        Report.f(
            "---\nThe benchmarks took %.1f minutes (after the build); load average at the end %s. Logs of "
                + "every process under `%s`.",
            minutes, Machine.loadAverage(), root.relativize(work.toAbsolutePath())));
    System.out.println();
    System.out.println(report.render());
    System.out.println("bench: report written to " + out);
    System.exit(failed ? 1 : 0);
  }

  private static String oneLine(Throwable e) {
    String m = String.valueOf(e.getMessage());
    return e.getClass().getSimpleName() + ": " + m.lines().findFirst().orElse("");
  }

  private static String header() {
    Map<String, String> v = Machine.versions();
    return Report.f(
        """
                # Benchmarks (`make bench`)

                %s UTC. Machine: %d cores (%s), %s RAM, load average %s at the start (the machine may be shared: \
                numbers from a busy machine are slower, ratios against peers measured in the same run less so). \
                JDK: %s. Kubernetes %s (etcd %s, kwok %s), built from source by hack/build-k8s.sh and run as local \
                processes; kwok plays the kubelets. Each timing: median (min–max) of the runs stated. Controller jar \
                measured: %s.""",
        Instant.now().truncatedTo(ChronoUnit.SECONDS).toString().replace('T', ' ').replace("Z", ""),
        Machine.cores(),
        Machine.cpuModel(),
        Machine.memory(),
        Machine.loadAverage(),
        Machine.jdk(),
        v.getOrDefault("KUBERNETES_VERSION", "?"),
        v.getOrDefault("ETCD_VERSION", "?"),
        v.getOrDefault("KWOK_VERSION", "?"),
        ControllerJar.describe());
  }

  static void progress(String line) {
    System.out.printf("bench [%5.0fs] %s%n", (System.nanoTime() - STARTED) / 1e9, line);
  }

  /**
   * Starts clusters side by side (start-up is mostly waiting), closing all of them if one fails.
   */
  static List<LocalCluster> startAll(List<LocalCluster.Builder> builders) {
    List<CompletableFuture<LocalCluster>> fs = new ArrayList<>();
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(builders.size());
    for (LocalCluster.Builder b : builders) {
      fs.add(CompletableFuture.supplyAsync(b::start, pool));
    }
    pool.shutdown();
    List<LocalCluster> started = new ArrayList<>();
    RuntimeException failure = null;
    for (CompletableFuture<LocalCluster> f : fs) {
      try {
        started.add(f.join());
      } catch (RuntimeException e) {
        failure = failure == null ? e : failure;
      }
    }
    if (failure != null) {
      started.forEach(LocalCluster::close);
      throw failure;
    }
    return started;
  }
}
