package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** CLI start-up: cordon and a no-op drain, kubectl against our CLI as a kubectl plugin. */
final class StartupBench extends Bench {
  /** The launcher before its start-up caches: what hack/plugin/kubectl-fastdrain first ran. */
  private static final String PLAIN_LAUNCHER =
      """
      #!/bin/sh
      set -eu
      here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
      exec "${JAVA:-java}" -jar "$here/vmi-eviction-controller.jar" "$@"
      """;

  @Override
  void run() throws Exception {
    int runs = runs("bench.startup.runs", 10);
    progress("startup: starting a cluster (etcd, kube-apiserver, kwok)");
    try (LocalCluster cluster = LocalCluster.builder("bench-startup").withKwok().start()) {
      // -Dbench.startup.beforeJar: "before" with another build (the one before the CLI's own
      // start-up changes); by default both run this tree's jar.
      String beforeJar = System.getProperty("bench.startup.beforeJar");
      Path jar = ControllerJar.path();
      Path before =
          plugin("plugin-before", PLAIN_LAUNCHER, beforeJar == null ? jar : Path.of(beforeJar));
      String launcher = Files.readString(RepoPaths.root().resolve("hack/plugin/kubectl-fastdrain"));
      Path after = plugin("plugin-after", launcher, jar);
      String kubectl = cluster.binaries().kubectl().toString();
      String node = cluster.kwokNodes().create("bench-startup", 1).get(0);
      String intro =
          Report.f(
              "## CLI start-up: cordon and a no-op drain\n\n"
                  + "One kwok node without pods, uncordoned before every run. kubectl against ours as a plugin "
                  + "(launcher and jar on PATH): *before* the launcher as it was (`java -jar`, %s), *after* "
                  + "`hack/plugin/kubectl-fastdrain` (an ahead-of-time cache its first run makes beside the jar, "
                  + "C1 only, serial GC), also run directly. Drain flags `%s`. %d runs each after an untimed "
                  + "warm-up, the order rotating; CPU: user + system of the process tree.\n\n",
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
                new Tool("kubectl " + op, concat(List.of(kubectl), args), after, false),
                new Tool("kubectl fastdrain " + op + ", before", plugin, before, true),
                new Tool("kubectl fastdrain " + op + ", after", plugin, after, true),
                new Tool(
                    "kubectl-fastdrain " + op + " (launcher directly), after",
                    concat(List.of(after.resolve("kubectl-fastdrain").toString()), args),
                    after,
                    true));
        // The first run through the new launcher makes the cache: timed on its own.
        for (Path old : archives(after)) {
          Files.delete(old);
        }
        kubectl(cluster, "uncordon " + node);
        Sample first = time(tools.get(2), Duration.ofMinutes(2));
        progress("startup: %s, first run (makes the cache): %.2f s", op, first.wall());
        if (archives(after).isEmpty()) {
          throw new IllegalStateException("the launcher's first run left no cache in " + after);
        }
        Map<String, List<Sample>> samples =
            rounds(
                "startup",
                tools,
                Collections.nCopies(tools.size(), runs),
                tools.stream().map(Tool::name).collect(Collectors.toSet()),
                (t, seq) -> kubectl(cluster, "uncordon " + node),
                (t, seq) -> {},
                Duration.ofMinutes(2));
        samples.put(tools.get(2).name() + ": first run (makes the cache)", List.of(first));
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
        report.atMost(
            Report.f(
                "CLI start-up: kubectl fastdrain %s (%s), s (before %.2f, kubectl %.2f)",
                op, op.equals("cordon") ? "one node" : "no-op", was, kubectlMedian),
            "%.2f",
            ours,
            Report.f("≤ %.1f", target),
            target);
      }
      report.section(intro + Report.table("tool|runs|wall s|CPU s (median)|wall / kubectl", rows));
    }
  }

  /** A kubectl plugin's directory: {@code launcher} as kubectl-fastdrain beside {@code jar}. */
  private Path plugin(String name, String launcher, Path jar) throws Exception {
    Path dir = Files.createDirectories(work.resolve(name));
    Files.writeString(dir.resolve("kubectl-fastdrain"), launcher);
    Files.setPosixFilePermissions(
        dir.resolve("kubectl-fastdrain"), PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.copy(
        jar, dir.resolve("vmi-eviction-controller.jar"), StandardCopyOption.REPLACE_EXISTING);
    return dir;
  }

  /** The ahead-of-time caches in {@code dir}. */
  private static List<Path> archives(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".aot")).toList();
    }
  }
}
