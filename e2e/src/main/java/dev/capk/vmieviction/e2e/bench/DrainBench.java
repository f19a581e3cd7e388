package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Benchmarks 1 and 7 ({@code selector}): our drain CLI against `kubectl drain`. */
final class DrainBench extends Bench {
  static final List<String> FLAGS =
      List.of("--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=10m");
  private static final int BUDGETS = 5;
  private static final String POOL = "bench.capk.dev/pool=selector";

  private final boolean bySelector;
  private LocalCluster cluster;
  private RawKube api;

  DrainBench(boolean bySelector) {
    this.bySelector = bySelector;
  }

  @Override
  void run() throws Exception {
    String name = bySelector ? "selector" : "drain";
    progress(
        "%s: starting a cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)",
        name);
    try (LocalCluster c = LocalCluster.builder("bench-" + name).withAll().start()) {
      cluster = c;
      api = new RawKube(c);
      if (bySelector) {
        selector();
      } else {
        drain();
      }
    }
  }

  /** {@code head} drain {@code target}, against {@code cluster}, with {@link #FLAGS}. */
  private static Tool tool(
      LocalCluster cluster, String name, List<String> head, List<String> target) {
    List<String> tail = List.of("--kubeconfig", cluster.kubeconfig().toString());
    return new Tool(name, concat(concat(concat(head, target), tail), FLAGS), null, false);
  }

  static Tool kubectl(LocalCluster cluster, String name, List<String> target) {
    return tool(cluster, name, List.of(cluster.binaries().kubectl().toString(), "drain"), target);
  }

  private Tool ours(List<String> target) {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> head = List.of(java, "-jar", ControllerJar.path().toString(), "drain");
    return tool(cluster, "ours", head, target);
  }

  /** A section of {@code title}, {@code what} was drained and how, then the rows of its table. */
  private void section(String title, String what, String first, List<List<String>> rows) {
    report.section(
        Report.f(
                "%s\n\n%s, refilled and uncordoned before every run; both tools with `%s`; ours is "
                    + "`java -jar controllers/target/vmi-eviction-controller.jar drain` (a fresh JVM each "
                    + "run), kubectl the pinned build, alternating. Time: start to exit, nodes empty.\n\n",
                title, what, String.join(" ", FLAGS))
            + Report.table(
                first + "|tool|runs|seconds|s per pod|ratio of medians|per-round ratio", rows)
            + "\nper-round ratio: ours / kubectl within the same round, median (min–max).\n");
  }

  private void drain() throws Exception {
    List<List<String>> rows = new ArrayList<>();
    boolean warm = false;
    for (int size : ints("bench.drain.sizes", "100,1000")) {
      int runs = runs("bench.drain.runs." + size, size >= 1000 ? 3 : 5);
      // kubectl drain evicts one pod per 0.2 s whatever the machine (it stays under client-go's
      // default client-side rate limit), so 1,000 pods take 200 s a run: fewer runs fit.
      int kubectlRuns =
          Integer.getInteger(
              "bench.drain.kubectlRuns." + size, size >= 1000 ? Math.min(2, runs) : runs);
      String node = cluster.kwokNodes().create("bench-drain-" + size, 1).get(0);
      Compared c =
          compare(
              Report.f("drain: %d pods", size),
              kubectl(cluster, "kubectl drain", List.of(node)),
              ours(List.of(node)),
              runs,
              kubectlRuns,
              !warm,
              Map.of(node, setUp("drain-" + size)),
              size);
      warm = true;
      rows.addAll(c.rows(Report.f("%,d", size), size));
      report.atMost(
          Report.f("1. drain %,d pods, ours / kubectl", size), "%.2f", c.ratio(), "≤ 0.30", 0.30);
      if (Math.min(runs, kubectlRuns) < 5) {
        report.note(
            Report.f(
                "Drain, %,d pods: ours ran %d times, kubectl %d (%.2f s per pod), not 5, to keep `make bench` "
                    + "under 30 minutes (`-Dbench.drain.runs.%d=5 -Dbench.drain.kubectlRuns.%5$d=5` runs 5).",
                size, runs, kubectlRuns, c.kubectl().median() / size, size));
      }
    }
    section(
        "## 1. Drain: our CLI against `kubectl drain`",
        Report.f(
            "A kwok node with N pods (one in ten behind one of %d PodDisruptionBudgets that "
                + "allow every disruption)",
            BUDGETS),
        "pods",
        rows);
  }

  private void selector() throws Exception {
    int nodeCount = Integer.getInteger("bench.selector.nodes", 3);
    int perNode = Integer.getInteger("bench.selector.pods", 300) / nodeCount;
    int runs = runs("bench.selector.runs", 3);
    String[] pool = POOL.split("=");
    List<String> nodes =
        cluster.kwokNodes().create("bench-selector", nodeCount, Map.of(pool[0], pool[1]));
    Map<String, String> namespaces = new LinkedHashMap<>();
    for (String node : nodes) {
      namespaces.put(node, setUp("sel-" + node));
    }
    String shape = Report.f("%d nodes × %,d pods", nodes.size(), perNode);
    Compared c =
        compare(
            "selector: " + shape,
            kubectl(cluster, "kubectl drain -l", List.of("-l", POOL)),
            ours(List.of("-l", POOL)),
            runs,
            runs,
            true,
            namespaces,
            perNode);
    report.verdict(
        Report.f("7. drain -l, %s, ours / kubectl", shape),
        Report.f(
            "%.2f: %s s vs %s s, %d runs each",
            c.ratio(), c.ours().medianMinMax(2), c.kubectl().medianMinMax(2), c.ours().n()),
        "≤ 0.30",
        c.ratio() <= 0.30);
    section(
        "## 7. Drain by node selector: our CLI against `kubectl drain -l`",
        Report.f(
            "%d kwok nodes labelled `%s` selected with `-l`, %,d pods each (budgets as in "
                + "benchmark 1; kubectl drains the nodes one after another, ours concurrently; "
                + "%d runs each, one warm-up run of ours first)",
            nodes.size(), POOL, perNode, runs),
        "nodes × pods",
        c.rows(shape, perNode * nodes.size()));
  }

  /** Both tools' times, and the ratio ours / kubectl within each round. */
  record Compared(Tool kubectlTool, Stats kubectl, Stats ours, Stats pairs) {
    double ratio() {
      return ours.median() / kubectl.median();
    }

    /** kubectl's row and ours, {@code pods} drained a run. */
    List<List<String>> rows(String first, int pods) {
      return List.of(
          row(first, kubectlTool.name(), kubectl, pods, "1.00", ""),
          row(
              first,
              "ours (java -jar)",
              ours,
              pods,
              Report.f("%.2f", ratio()),
              pairs.medianMinMax(2)));
    }

    private static List<String> row(
        String first, String tool, Stats s, int pods, String ratio, String pairs) {
      String perPod = Report.f("%.3f", s.median() / pods);
      return Report.row(first, tool, s.n(), s.medianMinMax(2), perPod, ratio, pairs);
    }
  }

  /**
   * Rounds of both tools (see {@link #rounds}: kubectl first in even rounds), each run on the nodes
   * of {@code namespaces} refilled with {@code perNode} pods each and leaving every one empty,
   * after an untimed warm-up round if {@code warmUp} (the selector's is ours alone: a first JVM
   * start reads the jar from a cold page cache; kubectl's would cost a minute and change nothing);
   * ours runs {@code runs} times, kubectl {@code kubectlRuns}.
   */
  private Compared compare(
      String what,
      Tool kubectl,
      Tool ours,
      int runs,
      int kubectlRuns,
      boolean warmUp,
      Map<String, String> namespaces,
      int perNode)
      throws Exception {
    Set<String> warm =
        !warmUp ? Set.of() : bySelector ? Set.of(ours.name()) : Set.of(ours.name(), kubectl.name());
    Map<String, List<Sample>> times =
        rounds(
            what,
            List.of(kubectl, ours),
            List.of(kubectlRuns, runs),
            warm,
            (t, seq) -> {
              for (Map.Entry<String, String> e : namespaces.entrySet()) {
                refill(e.getValue(), e.getKey(), perNode, "r" + seq);
              }
            },
            (t, seq) -> {
              for (String node : namespaces.keySet()) {
                int left = api.items("/api/v1/pods?fieldSelector=spec.nodeName%3D" + node).size();
                if (left != 0) {
                  throw new IllegalStateException(
                      t.name() + " exited 0 but left " + left + " pods on " + node);
                }
              }
            },
            Duration.ofMinutes(15));
    List<Sample> k = times.get(kubectl.name());
    List<Sample> o = times.get(ours.name());
    List<Double> pairs = new ArrayList<>();
    for (int i = 0; i < Math.min(k.size(), o.size()); i++) {
      pairs.add(o.get(i).wall() / k.get(i).wall());
    }
    return new Compared(
        kubectl, Stats.over(k, Sample::wall), Stats.over(o, Sample::wall), Stats.of(pairs));
  }

  /** A namespace with the owner ConfigMap and the budgets that {@link #refill} pods fall under. */
  private String setUp(String ns) throws Exception {
    api.createNamespace(ns, false);
    api.post("/api/v1/namespaces/" + ns + "/configmaps", "{\"metadata\":{\"name\":\"owner\"}}");
    for (int b = 0; b < BUDGETS; b++) {
      api.post(
          "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets",
          """
          {"metadata":{"name":"guard-%1$d"},"spec":{"minAvailable":0,"selector":{"matchLabels":{"guard":"g%1$d"}}}}"""
              .formatted(b));
    }
    return ns;
  }

  /** Uncordons the node and binds {@code size} fresh pods to it; waits until they run and count. */
  private void refill(String ns, String node, int size, String prefix) throws Exception {
    kubectl(cluster, "uncordon " + node);
    String ownerUid =
        RawKube.str(api.get("/api/v1/namespaces/" + ns + "/configmaps/owner"), "metadata", "uid");
    parallel(
        size,
        16,
        i ->
            api.post(
                "/api/v1/namespaces/" + ns + "/pods",
                """
                {"metadata":{"name":"%1$s-%2$d","labels":{"app":"bench"%3$s},
                  "ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"%4$s","controller":true}]},
                 "spec":{"nodeName":"%5$s","terminationGracePeriodSeconds":1,
                  "containers":[{"name":"main","image":"registry.example/app:1"}]}}"""
                    .formatted(
                        prefix,
                        i,
                        i % 10 == 0 ? ",\"guard\":\"g" + (i / 10 % BUDGETS) + "\"" : "",
                        ownerUid,
                        node)));
    String onNode = "/api/v1/pods?fieldSelector=spec.nodeName%3D" + node;
    Await.until(
        size + " running pods on " + node,
        Duration.ofMinutes(5),
        () ->
            api.items(onNode).stream()
                    .filter(p -> "Running".equals(RawKube.str(p, "status", "phase")))
                    .filter(p -> RawKube.str(p, "metadata", "deletionTimestamp") == null)
                    .count()
                == size);
    int guarded = (size + 9) / 10;
    Await.until(
        "budgets in " + ns + " counting " + guarded + " healthy pods",
        Duration.ofMinutes(2),
        () -> {
          int healthy = 0;
          for (var b : api.items("/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets")) {
            String current = RawKube.str(b, "status", "currentHealthy");
            if (current == null
                || !current.equals(RawKube.str(b, "status", "disruptionsAllowed"))) {
              return false;
            }
            healthy += Integer.parseInt(current);
          }
          return healthy == guarded;
        });
  }
}
