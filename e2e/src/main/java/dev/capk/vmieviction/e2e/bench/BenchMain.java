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
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.Function;

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
          case "drain" -> new DrainBench().in(report, opts, work, "bench-drain-runs").run();
          case "startup" -> new StartupBench().in(report, opts, work, "bench-startup-runs").run();
          case "evacuation" ->
              new EvacuationBench().in(report, opts, work, "bench-evacuation").run();
          case "scale" -> new ScaleBench().in(report, opts, work, "").run();
          case "selector" ->
              new SelectorDrainBench().in(report, opts, work, "bench-selector-runs").run();
          case "headofline" ->
              new HeadOfLineBench().in(report, opts, work, "bench-headofline").run();
          case "migration" -> new MigrationBench().in(report, opts, work, "bench-migration").run();
          case "cost" -> new CostBench().in(report, opts, work, "bench-cost").run();
          case "external" -> new ExternalInfraBench().in(report, opts, work, "").run();
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
   * Starts an infra cluster and {@code guests} guest clusters ({@code guestPrefix} and their index)
   * side by side, each built by {@code builder} from its name.
   */
  static List<LocalCluster> startAll(
      String infra, String guestPrefix, int guests, Function<String, LocalCluster.Builder> builder)
      throws Exception {
    List<LocalCluster.Builder> builders = new ArrayList<>(List.of(builder.apply(infra)));
    for (int k = 0; k < guests; k++) {
      builders.add(builder.apply(guestPrefix + k));
    }
    return startAll(builders);
  }

  /**
   * Starts clusters side by side (start-up is mostly waiting), closing all of them if one fails.
   */
  static List<LocalCluster> startAll(List<LocalCluster.Builder> builders) throws Exception {
    List<Callable<LocalCluster>> starts = new ArrayList<>();
    builders.forEach(b -> starts.add(b::start));
    return inParallel(starts, LocalCluster::close);
  }

  /** Runs {@code tasks} side by side; if one fails, closes what the others made and throws. */
  static <T> List<T> inParallel(List<Callable<T>> tasks, Consumer<T> close) throws Exception {
    if (tasks.isEmpty()) {
      return List.of();
    }
    ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
    List<Future<T>> fs = tasks.stream().map(pool::submit).toList();
    pool.shutdown();
    List<T> done = new ArrayList<>();
    Exception failure = null;
    for (Future<T> f : fs) {
      try {
        done.add(f.get());
      } catch (ExecutionException e) {
        if (failure == null) {
          failure = e.getCause() instanceof Exception c ? c : e;
        }
      }
    }
    if (failure != null) {
      done.forEach(close);
      throw failure;
    }
    return done;
  }

  interface IntTask {
    void run(int i) throws Exception;
  }

  /** Runs {@code task} for 0..n-1 on {@code threads} threads; throws the first failure. */
  static void parallel(int n, int threads, IntTask task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        fs.add(
            pool.submit(
                () -> {
                  task.run(k);
                  return null;
                }));
      }
      for (Future<?> f : fs) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
