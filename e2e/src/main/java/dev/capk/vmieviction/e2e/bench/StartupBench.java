package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** CLI start-up: cordon and a no-op drain, kubectl against our CLI as a kubectl plugin. */
final class StartupBench extends Bench {
  /** The launcher before the class-data archive: what hack/plugin/kubectl-fastdrain ran. */
  private static final String PLAIN_LAUNCHER =
      """
      #!/bin/sh
      set -eu
      here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
      exec "${JAVA:-java}" -jar "$here/vmi-eviction-controller.jar" "$@"
      """;

  /** sh's `times`: the shell's own user and system time, then its children's (the last line). */
  private static final Pattern TIMES =
      Pattern.compile("(\\d+)m([\\d.]+)s\\s+(\\d+)m([\\d.]+)s\\s*$");

  /** One command under test; {@code path} goes in front of PATH. */
  private record Tool(String name, List<String> command, Path path) {}

  private record Sample(double wall, double cpu) {}

  @Override
  void run() throws Exception {
    int runs = runs("bench.startup.runs", 10);
    progress("startup: starting a cluster (etcd, kube-apiserver, kwok)");
    try (LocalCluster cluster =
        startAll(List.of(LocalCluster.builder("bench-startup").withKwok())).get(0)) {
      try (Stream<Path> old = Files.walk(work)) {
        for (Path p : old.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
      Path before = Files.createDirectories(work.resolve("plugin-before"));
      Path after = Files.createDirectories(work.resolve("plugin-after"));
      Path cache = Files.createDirectories(work.resolve("xdg-cache"));
      Files.writeString(before.resolve("kubectl-fastdrain"), PLAIN_LAUNCHER);
      Files.copy(
          RepoPaths.root().resolve("hack/plugin/kubectl-fastdrain"),
          after.resolve("kubectl-fastdrain"));
      // -Dbench.startup.beforeJar: "before" with another build (the one before the CLI's own
      // start-up changes); by default both run this tree's jar.
      String beforeJar = System.getProperty("bench.startup.beforeJar");
      for (Path dir : List.of(before, after)) {
        Files.setPosixFilePermissions(
            dir.resolve("kubectl-fastdrain"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Path jar = dir == before && beforeJar != null ? Path.of(beforeJar) : ControllerJar.path();
        Files.copy(jar, dir.resolve("vmi-eviction-controller.jar"));
      }
      String kubectl = cluster.binaries().kubectl().toString();
      String node = cluster.kwokNodes().create("bench-startup", 1).get(0);
      String intro =
          Report.f(
              "## CLI start-up: cordon and a no-op drain\n\n"
                  + "One kwok node without pods, uncordoned before every run. kubectl's `cordon`/`drain` against "
                  + "ours as a kubectl plugin (launcher and jar on PATH, `kubectl fastdrain ...`): *before* the "
                  + "launcher as it was (`java -jar`, %s), *after* `hack/plugin/kubectl-fastdrain` (a class-data "
                  + "archive its first run records beside the jar, C1 only, serial GC), also run directly. Drain "
                  + "flags `%s`. %d runs each after an untimed warm-up, the order rotating; wall: start to exit; "
                  + "CPU: user + system of the process tree.\n\n",
              beforeJar == null ? "this tree's jar" : "the jar `" + beforeJar + "`",
              String.join(" ", DrainBench.FLAGS),
              runs);
      List<List<String>> rows = new ArrayList<>();
      for (String op : List.of("cordon", "drain")) {
        List<String> args =
            new ArrayList<>(List.of(op, node, "--kubeconfig", cluster.kubeconfig().toString()));
        if (op.equals("drain")) {
          args.addAll(DrainBench.FLAGS);
        }
        List<String> plugin = concat(List.of(kubectl, "fastdrain"), args);
        List<Tool> tools =
            List.of(
                new Tool("kubectl " + op, concat(List.of(kubectl), args), after),
                new Tool("kubectl fastdrain " + op + ", before", plugin, before),
                new Tool("kubectl fastdrain " + op + ", after", plugin, after),
                new Tool(
                    "kubectl-fastdrain " + op + " (launcher directly), after",
                    concat(List.of(after.resolve("kubectl-fastdrain").toString()), args),
                    after));
        // The first run through the new launcher records the archive: timed on its own.
        archives(after, true);
        cluster.kubectl().runOrFail(null, "uncordon", node);
        Sample first = time(tools.get(2), cache, true);
        progress("startup: %s, first run (records the archive): %.2f s", op, first.wall);
        if (archives(after, false).isEmpty()) {
          throw new IllegalStateException("the launcher's first run left no archive in " + after);
        }
        Map<String, List<Sample>> samples = new LinkedHashMap<>();
        for (int i = -1; i < runs; i++) {
          for (int k = 0; k < tools.size(); k++) {
            Tool t = tools.get(Math.floorMod(k + i, tools.size()));
            cluster.kubectl().runOrFail(null, "uncordon", node);
            Sample sample = time(t, cache, !t.name().startsWith("kubectl " + op));
            if (i >= 0) {
              samples.computeIfAbsent(t.name(), x -> new ArrayList<>()).add(sample);
            }
          }
          progress("startup: %s %s done", op, i < 0 ? "warm-up" : "round " + (i + 1));
        }
        samples.put(tools.get(2).name() + ": first run (records the archive)", List.of(first));
        double kubectlMedian = Stats.over(samples.get(tools.get(0).name()), Sample::wall).median();
        samples.forEach(
            (name, taken) -> {
              Stats w = Stats.over(taken, Sample::wall);
              double cpu = Stats.over(taken, Sample::cpu).median();
              String ratio = Report.f("%.1f", w.median() / kubectlMedian);
              rows.add(Report.row(name, w.n(), w.medianMinMax(2), Report.f("%.2f", cpu), ratio));
            });
        double ours = Stats.over(samples.get(tools.get(2).name()), Sample::wall).median();
        double was = Stats.over(samples.get(tools.get(1).name()), Sample::wall).median();
        double target = op.equals("cordon") ? 0.5 : 0.6;
        report.verdict(
            Report.f(
                "CLI start-up: kubectl fastdrain %s (%s), s (before %.2f, kubectl %.2f)",
                op, op.equals("cordon") ? "one node" : "no-op", was, kubectlMedian),
            Report.f("%.2f", ours),
            Report.f("≤ %.1f", target),
            ours <= target);
      }
      report.section(intro + Report.table("tool|runs|wall s|CPU s (median)|wall / kubectl", rows));
    }
  }

  /** The class-data archives in {@code dir}; deleted first if {@code delete}. */
  private static List<Path> archives(Path dir, boolean delete) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> out = files.filter(p -> p.toString().endsWith(".jsa")).toList();
      for (Path p : delete ? out : List.<Path>of()) {
        Files.delete(p);
      }
      return delete ? List.of() : out;
    }
  }

  /**
   * Runs {@code t} with its plugin directory first on PATH, through {@code sh} so that {@code
   * times} reports the CPU of the whole process tree; fails unless it exits 0 and, for ours, writes
   * nothing on stderr.
   */
  private Sample time(Tool t, Path cache, boolean quiet) throws Exception {
    String slug = t.name().replaceAll("[^a-z]+", "-");
    Path out = work.resolve(slug + ".out");
    Path err = work.resolve(slug + ".err");
    Path times = work.resolve(slug + ".times");
    String script =
        "\"$@\" >\"$BENCH_OUT\" 2>\"$BENCH_ERR\"; rc=$?; times >\"$BENCH_TIMES\"; exit $rc";
    ProcessBuilder pb =
        new ProcessBuilder(concat(List.of("/bin/sh", "-c", script, "sh"), t.command()));
    Map<String, String> env = pb.environment();
    env.remove("FASTDRAIN_JAR");
    env.remove("JAVA");
    env.put("XDG_CACHE_HOME", cache.toString());
    String javaBin = Path.of(System.getProperty("java.home"), "bin").toString();
    env.put(
        "PATH",
        String.join(
            File.pathSeparator, t.path().toString(), javaBin, env.getOrDefault("PATH", "")));
    env.put("BENCH_OUT", out.toString());
    env.put("BENCH_ERR", err.toString());
    env.put("BENCH_TIMES", times.toString());
    long start = System.nanoTime();
    Process p =
        pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!p.waitFor(2, TimeUnit.MINUTES)) {
      p.destroyForcibly().waitFor();
      throw new IllegalStateException(t.name() + " did not finish in 2 minutes, see " + out);
    }
    double wall = secondsSince(start);
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          t.name() + " failed (exit " + p.exitValue() + "), see " + out + " and " + err);
    }
    String stderr = Files.readString(err);
    if (quiet && !stderr.isEmpty()) {
      throw new IllegalStateException(t.name() + " wrote on stderr: " + stderr);
    }
    List<String> lines = Files.readAllLines(times);
    Matcher m = TIMES.matcher(lines.get(lines.size() - 1));
    if (!m.find()) {
      throw new IllegalStateException("unexpected `times` output: " + lines);
    }
    double cpu =
        Integer.parseInt(m.group(1)) * 60
            + Double.parseDouble(m.group(2))
            + Integer.parseInt(m.group(3)) * 60
            + Double.parseDouble(m.group(4));
    return new Sample(wall, cpu);
  }
}
