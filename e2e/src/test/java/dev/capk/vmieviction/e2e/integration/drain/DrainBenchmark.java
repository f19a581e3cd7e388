package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.ownedBy;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Benchmark, not a test (its name keeps it out of every test run; hack/bench-drain.sh runs it):
 * drains a kwok node holding N pods with our CLI (the runnable jar, as its own process) and with
 * the real kubectl drain, same flags, same cluster, alternating, each at least 5 timed runs after
 * one warm-up, and prints medians and the ratio ours/kubectl. Each run starts from a fresh set of N
 * Running pods on an uncordoned node and must end with the node empty. No timing is asserted.
 *
 * <p>Properties: bench.sizes (default 100,1000), bench.runs (default 5).
 */
class DrainBenchmark {
  @RegisterExtension
  static final LocalClusterExtension BENCH = LocalClusterExtension.shared("bench");

  private static final List<String> FLAGS =
      List.of("--ignore-daemonsets", "--delete-emptydir-data", "--timeout=10m");

  /**
   * JVM flags for a short-lived CLI: an AppCDS archive of the classes a drain loads, and the quick
   * JIT tier only.
   */
  private static final List<String> FAST_JVM =
      List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto");

  private DrainFixture fx;
  private Path jar;
  private Path cdsArchive;

  private record Tool(String name, List<String> command) {}

  @Test
  void ourCliAgainstKubectlDrain() throws Exception {
    fx = new DrainFixture(BENCH.cluster());
    int runs = Math.max(1, Integer.getInteger("bench.runs", 5));
    List<Integer> sizes =
        Arrays.stream(System.getProperty("bench.sizes", "100,1000").split(","))
            .map(String::strip)
            .filter(s -> !s.isEmpty())
            .map(Integer::parseInt)
            .toList();
    jar = RepoPaths.root().resolve("controllers/target/vmi-eviction-controller.jar");
    assertTrue(Files.isRegularFile(jar), "build the runnable jar first (make package): " + jar);
    Path work = RepoPaths.workDir().resolve("bench");
    Files.createDirectories(work);
    cdsArchive = work.resolve("drain-cli.jsa");

    String kubeconfig = fx.cluster.kubeconfig().toString();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    createCdsArchive(java, kubeconfig, work);

    Map<Integer, Map<String, List<Double>>> results = new LinkedHashMap<>();
    for (int size : sizes) {
      String prefix = DrainFixture.unique("bench" + size);
      String node = fx.nodes(prefix, 1).get(0);
      String ns = fx.namespace(prefix);
      V1OwnerReference owner = fx.owner(ns);
      List<Tool> tools =
          List.of(
              new Tool(
                  "kubectl drain",
                  concat(
                      List.of(
                          fx.cluster.binaries().kubectl().toString(),
                          "drain",
                          node,
                          "--kubeconfig",
                          kubeconfig),
                      FLAGS)),
              new Tool(
                  "ours (java -jar)",
                  concat(
                      List.of(
                          java, "-jar", jar.toString(), "drain", node, "--kubeconfig", kubeconfig),
                      FLAGS)),
              new Tool(
                  "ours (java -jar, AppCDS + C1)",
                  concat(
                      concat(List.of(java, "-XX:SharedArchiveFile=" + cdsArchive), FAST_JVM),
                      concat(
                          List.of(
                              "-jar", jar.toString(), "drain", node, "--kubeconfig", kubeconfig),
                          FLAGS))));
      Map<String, List<Double>> times = new LinkedHashMap<>();
      int round = 0;
      for (int i = -1; i < runs; i++) { // i == -1: one untimed warm-up round
        for (Tool t : tools) {
          refill(node, ns, owner, size, "r" + (round++));
          double seconds = time(t, node, work);
          if (i >= 0) {
            times.computeIfAbsent(t.name(), k -> new ArrayList<>()).add(seconds);
          }
          System.out.printf(
              Locale.ROOT,
              "bench: %d pods, %s, %s: %.3f s%n",
              size,
              t.name(),
              i < 0 ? "warm-up" : "run " + (i + 1),
              seconds);
        }
      }
      results.put(size, times);
    }
    printTable(results, runs);
  }

  /**
   * Runs a client dry run once with -XX:ArchiveClassesAtExit, so later runs map the CLI's classes
   * from the archive.
   */
  private void createCdsArchive(String java, String kubeconfig, Path work) throws Exception {
    Files.deleteIfExists(cdsArchive);
    String node = fx.nodes(DrainFixture.unique("cds"), 1).get(0);
    Process p =
        new ProcessBuilder(
                concat(
                    List.of(
                        java,
                        "-XX:ArchiveClassesAtExit=" + cdsArchive,
                        "-jar",
                        jar.toString(),
                        "drain",
                        node,
                        "--kubeconfig",
                        kubeconfig),
                    List.of("--ignore-daemonsets")))
            .redirectErrorStream(true)
            .redirectOutput(work.resolve("cds.log").toFile())
            .start();
    assertTrue(
        p.waitFor(2, TimeUnit.MINUTES) && p.exitValue() == 0,
        "CDS archive run failed, see " + work.resolve("cds.log"));
    new Cordoner(new RawApi(fx.cluster.client())).setUnschedulable(node, false, DryRun.NONE);
  }

  /** An uncordoned node with exactly {@code size} fresh Running pods. */
  private void refill(String node, String ns, V1OwnerReference owner, int size, String prefix)
      throws Exception {
    new Cordoner(new RawApi(fx.cluster.client())).setUnschedulable(node, false, DryRun.NONE);
    fx.pods(ns, node, prefix, size, ownedBy(owner));
    fx.awaitRunning(ns, size);
  }

  private double time(Tool t, String node, Path work) throws Exception {
    File log = work.resolve("last-" + t.name().replaceAll("[^a-z]+", "-") + ".log").toFile();
    long start = System.nanoTime();
    Process p =
        new ProcessBuilder(t.command()).redirectErrorStream(true).redirectOutput(log).start();
    boolean finished = p.waitFor(15, TimeUnit.MINUTES);
    double seconds = (System.nanoTime() - start) / 1e9;
    assertTrue(finished && p.exitValue() == 0, t.name() + " failed, see " + log);
    assertTrue(fx.podsOn(node).isEmpty(), t.name() + " left pods on " + node);
    return seconds;
  }

  private static void printTable(Map<Integer, Map<String, List<Double>>> results, int runs) {
    StringBuilder s = new StringBuilder();
    s.append(
        String.format(
            Locale.ROOT,
            "%n== drain benchmark: kwok node, %d timed runs per cell (after 1 warm-up), flags: %s ==%n",
            runs,
            String.join(" ", FLAGS)));
    s.append(
        String.format(
            Locale.ROOT,
            "%-6s | %-32s | %10s | %10s | %10s | %8s%n",
            "pods",
            "tool",
            "median s",
            "min s",
            "max s",
            "ratio"));
    s.append("-".repeat(92)).append('\n');
    for (Map.Entry<Integer, Map<String, List<Double>>> bySize : results.entrySet()) {
      double kubectl = median(bySize.getValue().get("kubectl drain"));
      for (Map.Entry<String, List<Double>> t : bySize.getValue().entrySet()) {
        List<Double> v = t.getValue();
        double m = median(v);
        s.append(
            String.format(
                Locale.ROOT,
                "%-6d | %-32s | %10.3f | %10.3f | %10.3f | %8.2f%n",
                bySize.getKey(),
                t.getKey(),
                m,
                v.stream().mapToDouble(Double::doubleValue).min().orElse(0),
                v.stream().mapToDouble(Double::doubleValue).max().orElse(0),
                m / kubectl));
      }
    }
    s.append("ratio = median / kubectl's median in the same run (target: at most 0.30)\n");
    System.out.print(s);
  }

  private static double median(List<Double> v) {
    List<Double> sorted = new ArrayList<>(v);
    sorted.sort(Double::compare);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
