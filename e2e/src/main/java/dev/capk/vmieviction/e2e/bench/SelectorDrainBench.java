package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Benchmark 7: a multi-node drain by node selector, our CLI ({@code drain -l}) against the real
 * {@code kubectl drain -l}, same flags, same cluster: three kwok nodes carrying one label, each
 * refilled before every run with its share of the pods (in a namespace of its own, with benchmark
 * 1's budgets, so each node's budgets count only its pods). kubectl drains the matched nodes one
 * after another; ours drains them concurrently. One warm-up run of ours, then the order alternates
 * each round. Each run must end with every node empty.
 */
final class SelectorDrainBench extends Bench {
  static final String POOL_LABEL = "bench.capk.dev/pool";
  static final String POOL = "selector";

  @Override
  void run() throws Exception {
    int nodeCount = opts.integer("bench.selector.nodes", 3);
    int pods = opts.integer("bench.selector.pods", 300);
    int perNode = pods / nodeCount;
    int runs = opts.runs("bench.selector.runs", 3);
    BenchMain.progress(
        "selector: starting a cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)");
    try (LocalCluster cluster =
        BenchMain.startAll(List.of(LocalCluster.builder("bench-selector").withAll())).get(0)) {
      Files.createDirectories(work);
      RawKube api = new RawKube(cluster);
      String kubeconfig = cluster.kubeconfig().toString();
      String selector = POOL_LABEL + "=" + POOL;
      List<String> nodes =
          cluster.kwokNodes().create("bench-selector", nodeCount, Map.of(POOL_LABEL, POOL));
      List<String> namespaces = new ArrayList<>();
      for (String node : nodes) {
        String ns = "sel-" + node;
        DrainBench.setUp(api, ns);
        namespaces.add(ns);
      }
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      String jar = ControllerJar.path().toString();
      DrainBench.Tool kubectl =
          new DrainBench.Tool(
              "kubectl drain -l",
              DrainBench.concat(
                  List.of(
                      cluster.binaries().kubectl().toString(),
                      "drain",
                      "-l",
                      selector,
                      "--kubeconfig",
                      kubeconfig),
                  DrainBench.FLAGS));
      DrainBench.Tool ours =
          new DrainBench.Tool(
              "ours",
              DrainBench.concat(
                  List.of(java, "-jar", jar, "drain", "-l", selector, "--kubeconfig", kubeconfig),
                  DrainBench.FLAGS));
      // The warm-up round is ours alone (a first JVM start reads the jar from a cold page cache);
      // kubectl's warm-up would cost a minute and change nothing.
      DrainBench.Compared c =
          DrainBench.compare(
              Report.f("selector: %d nodes x %d pods", nodes.size(), perNode),
              kubectl,
              ours,
              runs,
              runs,
              List.of(ours),
              prefix -> {
                for (int n = 0; n < nodes.size(); n++) {
                  DrainBench.refill(cluster, api, namespaces.get(n), nodes.get(n), perNode, prefix);
                }
              },
              api,
              work,
              nodes);
      Stats theirs = c.kubectl();
      Stats mine = c.ours();
      double ratio = c.ratio();
      int total = perNode * nodes.size();
      String shape = Report.f("%d nodes × %,d pods", nodes.size(), perNode);
      report.verdict(
          Report.f("7. drain -l, %s, ours / kubectl", shape),
          Report.f(
              "%.2f: %s s vs %s s, %d runs each",
              ratio, mine.medianMinMax(2), theirs.medianMinMax(2), mine.n()),
          "≤ 0.30",
          ratio <= 0.30);
      if (runs < 5) {
        report.note(
            Report.f(
                "Drain by selector: each tool ran %d times, not 5: kubectl's run takes about %.0f s, "
                    + "and 5 would not fit `make bench` in 30 minutes (`BENCH_OPTS=-Dbench.selector.runs=5` "
                    + "runs 5).",
                runs, theirs.median()));
      }
      StringBuilder s =
          new StringBuilder("## 7. Drain by node selector: our CLI against `kubectl drain -l`\n\n");
      s.append(
          Report.f(
              "%d kwok nodes labelled `%s`, %,d pods each (%,d in all; one in ten behind a "
                  + "PodDisruptionBudget that allows every disruption, as in benchmark 1), refilled and "
                  + "uncordoned before every run; both tools select the nodes with `-l %s` and run with `%s`; "
                  + "ours is `java -jar controllers/target/vmi-eviction-controller.jar drain` (a fresh JVM "
                  + "each run), kubectl the pinned build. kubectl drains the nodes one after another, ours "
                  + "concurrently. One warm-up run of ours, then the order alternates each round. Time: process "
                  + "start to exit, every node empty.\n\n",
              nodes.size(),
              selector,
              perNode,
              total,
              selector,
              String.join(" ", DrainBench.FLAGS)));
      s.append(
          Report.table(DrainBench.HEAD.replace("FIRST", "nodes × pods"), c.rows(shape, total)));
      s.append("\nper-round ratio: ours / kubectl within the same round, median (min–max).\n");
      report.section(s.toString());
    }
  }
}
