package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.io.File;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One section of the report, in its work directory, with its knobs: system properties (make bench
 * passes BENCH_OPTS through) whose defaults are what `make bench` measures.
 */
abstract class Bench {
  static final long STARTED = System.nanoTime();
  Report report;
  Path work;

  final Bench in(Report report, Path work, String dir) throws Exception {
    this.report = report;
    this.work = Files.createDirectories(work.resolve(dir));
    return this;
  }

  Path auditDir() {
    return work.resolve("audit");
  }

  abstract void run() throws Exception;

  /** A comma-separated list property; empty entries dropped. */
  static List<String> strings(String key, String defaults) {
    return Arrays.stream(System.getProperty(key, defaults).split(","))
        .map(String::strip)
        .filter(s -> !s.isEmpty())
        .toList();
  }

  static List<Integer> ints(String key, String defaults) {
    return strings(key, defaults).stream().map(Integer::parseInt).toList();
  }

  /** Runs for one configuration: its own property, else bench.runs, else {@code def}. */
  static int runs(String key, int def) {
    return Integer.getInteger(key, Integer.getInteger("bench.runs", def));
  }

  static void progress(String format, Object... args) {
    System.out.printf(
        "bench [%5.0fs] %s%n", (System.nanoTime() - STARTED) / 1e9, Report.f(format, args));
  }

  /** {@code kubectl ARGS} (split at spaces) against {@code cluster}; fails unless it exits 0. */
  static void kubectl(KubeCluster cluster, String args) {
    cluster.kubectl().runOrFail(null, args.split(" "));
  }

  static double secondsSince(long nanos) {
    return (System.nanoTime() - nanos) / 1e9;
  }

  static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  /** When a counter settled: see {@link #awaitQuiet}; nanos by {@link System#nanoTime()}. */
  record Quiet(long startNanos, long quietSinceNanos, double before, double last) {}

  /**
   * Waits until {@code counter} (requests, log bytes, CPU seconds; read every second) has grown by
   * at most {@code allowedPerSecond} a second for 3 s, at least {@code minimum} from now (a wave
   * may begin a moment after a cache synced), at most {@code cap}.
   */
  static Quiet awaitQuiet(
      Callable<Double> counter, double allowedPerSecond, Duration minimum, Duration cap)
      throws Exception {
    long t0 = System.nanoTime();
    double before = counter.call();
    double last = before;
    long quietSince = t0;
    while (System.nanoTime() - t0 < cap.toNanos()) {
      Thread.sleep(1000);
      double now = counter.call();
      if (now - last > allowedPerSecond) {
        quietSince = System.nanoTime();
      }
      last = now;
      if (System.nanoTime() - quietSince > 3e9 && System.nanoTime() - t0 > minimum.toNanos()) {
        break;
      }
    }
    return new Quiet(t0, quietSince, before, last);
  }

  /**
   * The infra cluster ({@code bench-NAME-infra}) and guest clusters ({@code bench-NAME-guest-K}) of
   * a section, audited by the infra's or the guests' rules where given: each with every component
   * if {@code full}, else an API server alone for the infra and kwok beside it for the guests.
   */
  List<LocalCluster> startClusters(
      String name, int guests, String infraRules, String guestRules, boolean full)
      throws Exception {
    progress("%s: starting an infra cluster and %d guest clusters", name, guests);
    List<LocalCluster.Builder> builders = new ArrayList<>();
    for (int k = -1; k < guests; k++) {
      String n = "bench-" + name + (k < 0 ? "-infra" : "-guest-" + k);
      LocalCluster.Builder b = LocalCluster.builder(n);
      builders.add(full ? b.withAll() : k < 0 ? b : b.withKwok());
      String rules = k < 0 ? infraRules : guestRules;
      if (rules != null) {
        AuditLog.apiServerFlags(auditDir(), n, rules).forEach(b::apiServerFlag);
      }
    }
    return startAll(builders);
  }

  /** Starts clusters side by side (start-up is mostly waiting), closing all if one fails. */
  static List<LocalCluster> startAll(List<LocalCluster.Builder> builders) throws Exception {
    LocalCluster[] started = new LocalCluster[builders.size()];
    try {
      parallel(builders.size(), builders.size(), i -> started[i] = builders.get(i).start());
      return List.of(started);
    } catch (Exception e) {
      Arrays.stream(started).filter(Objects::nonNull).forEach(LocalCluster::close);
      throw e;
    }
  }

  /** Calls {@code sample} every {@code periodMs} until closed; a failed sample is skipped. */
  static AutoCloseable sampling(long periodMs, Callable<?> sample) {
    ScheduledExecutorService pool = Executors.newSingleThreadScheduledExecutor();
    Runnable once =
        () -> {
          try {
            sample.call();
          } catch (Exception e) {
            // a missed sample: the next one counts
          }
        };
    pool.scheduleWithFixedDelay(once, 0, periodMs, TimeUnit.MILLISECONDS);
    return () -> {
      pool.shutdownNow();
      pool.awaitTermination(5, TimeUnit.SECONDS);
    };
  }

  interface IntTask {
    void run(int i) throws Exception;
  }

  /** Runs {@code task} for 0..n-1 on {@code threads} threads; then throws the first failure. */
  static void parallel(int n, int threads, IntTask task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(n, threads)));
    List<Callable<Void>> tasks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int k = i;
      tasks.add(
          () -> {
            task.run(k);
            return null;
          });
    }
    try {
      for (Future<Void> f : pool.invokeAll(tasks)) {
        try {
          f.get();
        } catch (ExecutionException e) {
          throw e.getCause() instanceof Exception c ? c : e;
        }
      }
    } finally {
      pool.shutdown();
    }
  }

  /**
   * A command to time; {@code path} (unless null) goes in front of PATH; {@code quiet}: it must
   * write nothing on stderr.
   */
  record Tool(String name, List<String> command, Path path, boolean quiet) {}

  /** One timed run: wall seconds, and CPU seconds of its process tree (user + system). */
  record Sample(double wall, double cpu) {}

  interface Step {
    void run(Tool tool, int seq) throws Exception;
  }

  /**
   * Rounds of {@code tools} (tool k in the first {@code runs.get(k)} only), the order rotating each
   * round, after an untimed warm-up round of the tools named in {@code warm}; {@code before} and
   * {@code after} each run (numbered from 0). The samples by tool name.
   */
  Map<String, List<Sample>> rounds(
      String what,
      List<Tool> tools,
      List<Integer> runs,
      Set<String> warm,
      Step before,
      Step after,
      Duration timeout)
      throws Exception {
    Map<String, List<Sample>> out = new LinkedHashMap<>();
    tools.forEach(t -> out.put(t.name(), new ArrayList<>()));
    int seq = 0;
    for (int i = -1; i < Collections.max(runs); i++) {
      for (int k = 0; k < tools.size(); k++) {
        int j = Math.floorMod(k + i, tools.size());
        Tool t = tools.get(j);
        if (i < 0 ? !warm.contains(t.name()) : i >= runs.get(j)) {
          continue;
        }
        before.run(t, seq);
        Sample sample = time(t, timeout);
        after.run(t, seq++);
        if (i >= 0) {
          out.get(t.name()).add(sample);
        }
        progress(
            "%s, %-16s %s: %.2f s",
            what, t.name(), i < 0 ? "warm-up" : "run " + (i + 1), sample.wall);
      }
    }
    return out;
  }

  /**
   * Runs {@code t} through {@code sh}, whose {@code times} reports the CPU of the whole process
   * tree; fails unless it exits 0 within {@code timeout} (and, if quiet, with nothing on stderr).
   * Its output goes to {@code NAME.out} and {@code NAME.err} in the work directory.
   */
  Sample time(Tool t, Duration timeout) throws Exception {
    String slug = t.name().replaceAll("[^a-z]+", "-");
    Path out = work.resolve(slug + ".out");
    Path err = work.resolve(slug + ".err");
    Path times = work.resolve(slug + ".times");
    String script =
        "o=$1 e=$2 t=$3; shift 3; \"$@\" >\"$o\" 2>\"$e\"; rc=$?; times >\"$t\"; exit $rc";
    List<String> sh = List.of("/bin/sh", "-c", script, "sh", out + "", err + "", times + "");
    ProcessBuilder pb = new ProcessBuilder(concat(sh, t.command()));
    Map<String, String> env = pb.environment();
    env.remove("FASTDRAIN_JAR");
    env.remove("JAVA");
    env.put("XDG_CACHE_HOME", work.resolve("xdg-cache").toString());
    String javaBin = Path.of(System.getProperty("java.home"), "bin").toString();
    String path = String.join(File.pathSeparator, javaBin, env.getOrDefault("PATH", ""));
    env.put("PATH", t.path() == null ? path : t.path() + File.pathSeparator + path);
    long start = System.nanoTime();
    Process p = pb.redirectErrorStream(true).redirectOutput(Redirect.DISCARD).start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly().waitFor();
      throw new IllegalStateException(t.name() + " did not finish in " + timeout + ", see " + out);
    }
    double wall = secondsSince(start);
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          t.name() + " failed (exit " + p.exitValue() + "), see " + out + " and " + err);
    }
    if (t.quiet() && Files.size(err) > 0) {
      throw new IllegalStateException(t.name() + " wrote on stderr: " + Files.readString(err));
    }
    // sh's `times`: the shell's own user and system time, then its children's (the last line),
    // each as "1m2.345s".
    List<String> lines = Files.readAllLines(times);
    double cpu = 0;
    for (String time : lines.get(lines.size() - 1).strip().split("\\s+")) {
      String[] minutesSeconds = time.split("[ms]");
      cpu += Integer.parseInt(minutesSeconds[0]) * 60 + Double.parseDouble(minutesSeconds[1]);
    }
    return new Sample(wall, cpu);
  }
}
