package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark 1: our drain CLI (the runnable jar, `java -jar ... drain`) against the real `kubectl
 * drain`, same flags, same cluster, on a kwok node holding N pods, alternating which goes first.
 * Before each run the node is uncordoned and refilled with N fresh Running pods bound to it: each
 * declares a controller (a ConfigMap, which kubectl only checks exists as an owner), and one in ten
 * is covered by one of five PodDisruptionBudgets with minAvailable 0: every eviction of those goes
 * through the budget check, and none is refused. Each run must end with the node empty.
 */
final class DrainBench extends Bench {
  static final List<String> FLAGS =
      List.of("--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=10m");
  static final int BUDGETS = 5;

  /** One drain command under test, by the name its row carries. */
  record Tool(String name, List<String> command) {}

  @Override
  void run() throws Exception {
    List<Integer> sizes = opts.ints("bench.drain.sizes", "100,1000");
    BenchMain.progress(
        "drain: starting a cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)");
    try (LocalCluster cluster =
        BenchMain.startAll(List.of(LocalCluster.builder("bench-drain").withAll())).get(0)) {
      java.nio.file.Files.createDirectories(work);
      RawKube api = new RawKube(cluster);
      String kubeconfig = cluster.kubeconfig().toString();
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      String jar = ControllerJar.path().toString();
      StringBuilder s = new StringBuilder("## 1. Drain: our CLI against `kubectl drain`\n\n");
      s.append(
          "A kwok node with N pods (one in ten behind one of "
              + BUDGETS
              + " PodDisruptionBudgets that allow every "
              + "disruption), refilled and uncordoned before every run; both tools with `"
              + String.join(" ", FLAGS)
              + "`; ours is `java -jar controllers/target/vmi-eviction-controller.jar drain` (a fresh JVM each run, "
              + "start-up included), kubectl the pinned build. The order alternates each round. Time: process start "
              + "to exit, node empty.\n\n");
      List<List<String>> rows = new ArrayList<>();
      boolean warm = false;
      for (int size : sizes) {
        int runs = opts.runs("bench.drain.runs." + size, size >= 1000 ? 3 : 5);
        // kubectl drain evicts one pod per 0.2 s whatever the machine (it stays under client-go's
        // default client-side rate limit), so 1,000 pods take 200 s a run: fewer runs of it fit the
        // time budget.
        int kubectlRuns =
            Integer.getInteger(
                "bench.drain.kubectlRuns." + size, size >= 1000 ? Math.min(2, runs) : runs);
        String node = cluster.kwokNodes().create("bench-drain-" + size, 1).get(0);
        String ns = "drain-" + size;
        setUp(api, ns);
        Tool kubectl =
            new Tool(
                "kubectl drain",
                concat(
                    List.of(
                        cluster.binaries().kubectl().toString(),
                        "drain",
                        node,
                        "--kubeconfig",
                        kubeconfig),
                    FLAGS));
        Tool ours =
            new Tool(
                "ours",
                concat(
                    List.of(java, "-jar", jar, "drain", node, "--kubeconfig", kubeconfig), FLAGS));
        Compared c =
            compare(
                Report.f("drain: %d pods", size),
                kubectl,
                ours,
                runs,
                kubectlRuns,
                warm ? List.of() : List.of(ours, kubectl),
                prefix -> refill(cluster, api, ns, node, size, prefix),
                api,
                work,
                List.of(node));
        warm = true;
        rows.addAll(c.rows(Report.f("%,d", size), size));
        report.verdict(
            Report.f("1. drain %,d pods, ours / kubectl", size),
            Report.f("%.2f", c.ratio()),
            "≤ 0.30",
            c.ratio() <= 0.30);
        if (runs < 5) {
          report.note(
              Report.f(
                  "Drain, %,d pods: our CLI ran %d times, not 5, to keep `make bench` under 30 minutes "
                      + "(`BENCH_OPTS=-Dbench.drain.runs.%d=5` runs 5).",
                  size, runs, size));
        }
        if (kubectlRuns < 5) {
          double k = c.kubectl().median();
          report.note(
              Report.f(
                  "Drain, %,d pods: kubectl drain ran %d times, not 5: each run takes about %.0f s (%.2f s per pod, "
                      + "the same per-pod pace as at smaller sizes), and 5 would not fit `make bench` in 30 minutes. "
                      + "`make bench BENCH_OPTS=-Dbench.drain.kubectlRuns.%d=5` runs all 5.",
                  size, kubectlRuns, k, k / size, size));
        }
      }
      s.append(Report.table(HEAD.replace("FIRST", "pods"), rows));
      s.append("\nper-round ratio: ours / kubectl within the same round, median (min–max).\n");
      report.section(s.toString());
    }
  }

  /** The table's header; FIRST: what the first column counts. */
  static final String HEAD = "FIRST|tool|runs|seconds|s per pod|ratio of medians|per-round ratio";

  /** Makes the next run's world (nodes refilled, uncordoned); its pods' names start so. */
  interface Refill {
    void prepare(String podPrefix) throws Exception;
  }

  /** Both tools' times, and the ratio ours / kubectl within each round. */
  record Compared(Stats kubectl, Stats ours, Stats pairs, String kubectlName) {
    double ratio() {
      return ours.median() / kubectl.median();
    }

    /** kubectl's row and ours, {@code pods} drained a run. */
    List<List<String>> rows(String first, int pods) {
      return List.of(
          Report.row(
              first,
              kubectlName,
              kubectl.n(),
              kubectl.medianMinMax(2),
              Report.f("%.3f", kubectl.median() / pods),
              "1.00",
              ""),
          Report.row(
              first,
              "ours (java -jar)",
              ours.n(),
              ours.medianMinMax(2),
              Report.f("%.3f", ours.median() / pods),
              Report.f("%.2f", ratio()),
              pairs.medianMinMax(2)));
    }
  }

  /**
   * Rounds of both tools, the order alternating (kubectl first in even rounds), each run on a world
   * {@code refill} made afresh, after a warm-up round of {@code warmUp} (untimed); ours runs {@code
   * runs} times, kubectl {@code kubectlRuns}.
   */
  static Compared compare(
      String what,
      Tool kubectl,
      Tool ours,
      int runs,
      int kubectlRuns,
      List<Tool> warmUp,
      Refill refill,
      RawKube api,
      Path work,
      List<String> nodes)
      throws Exception {
    Map<String, List<Double>> times = new LinkedHashMap<>();
    List<Double> pairRatios = new ArrayList<>();
    int round = 0;
    for (int i = warmUp.isEmpty() ? 0 : -1; i < Math.max(runs, kubectlRuns); i++) {
      List<Tool> order =
          new ArrayList<>(
              i < 0 ? warmUp : i % 2 == 0 ? List.of(kubectl, ours) : List.of(ours, kubectl));
      if (i >= kubectlRuns) {
        order.remove(kubectl);
      }
      if (i >= runs) {
        order.remove(ours);
      }
      Map<String, Double> thisRound = new LinkedHashMap<>();
      for (Tool t : order) {
        refill.prepare("r" + (round++));
        double sec = time(t, api, work, nodes);
        thisRound.put(t.name(), sec);
        BenchMain.progress(
            Report.f(
                "%s, %-16s %s: %.2f s", what, t.name(), i < 0 ? "warm-up" : "run " + (i + 1), sec));
      }
      if (i >= 0) {
        thisRound.forEach((k, v) -> times.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
        if (thisRound.size() == 2) {
          pairRatios.add(thisRound.get(ours.name()) / thisRound.get(kubectl.name()));
        }
      }
    }
    return new Compared(
        Stats.of(times.get(kubectl.name())),
        Stats.of(times.get(ours.name())),
        Stats.of(pairRatios),
        kubectl.name());
  }

  /** A namespace with the owner ConfigMap and the budgets that {@link #refill} pods fall under. */
  static void setUp(RawKube api, String ns) throws Exception {
    api.createNamespace(ns, false);
    api.post("/api/v1/namespaces/" + ns + "/configmaps", "{\"metadata\":{\"name\":\"owner\"}}");
    for (int b = 0; b < BUDGETS; b++) {
      api.post(
          "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets",
          """
                    {"metadata":{"name":"guard-%1$d"},"spec":{"minAvailable":0,"selector":{"matchLabels":{"guard":"g%1$d"}}}}"""
              .formatted(b));
    }
  }

  /**
   * Uncordons the node and binds {@code size} fresh pods to it; waits until they run and the
   * budgets count them.
   */
  static void refill(
      LocalCluster cluster, RawKube api, String ns, String node, int size, String prefix)
      throws Exception {
    cluster.kubectl().runOrFail(null, "uncordon", node);
    String ownerUid =
        RawKube.str(
            api.getJson("/api/v1/namespaces/" + ns + "/configmaps/owner"), "metadata", "uid");
    BenchMain.parallel(
        size,
        16,
        i -> {
          String guard = i % 10 == 0 ? ",\"guard\":\"g" + (i / 10 % BUDGETS) + "\"" : "";
          api.post(
              "/api/v1/namespaces/" + ns + "/pods",
              """
                    {"metadata":{"name":"%1$s-%2$d","labels":{"app":"bench"%3$s},
                      "ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"%4$s","controller":true}]},
                     "spec":{"nodeName":"%5$s","terminationGracePeriodSeconds":1,
                      "containers":[{"name":"main","image":"registry.example/app:1"}]}}"""
                  .formatted(prefix, i, guard, ownerUid, node));
        });
    Await.until(
        size + " running pods on " + node,
        Duration.ofMinutes(5),
        () -> runningOn(api, node) == size);
    int guarded = (size + 9) / 10;
    Await.until(
        "budgets in " + ns + " counting " + guarded + " healthy pods",
        Duration.ofMinutes(2),
        () -> {
          int healthy = 0;
          for (JsonElement e :
              api.getJson("/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets")
                  .getAsJsonArray("items")) {
            JsonObject st = e.getAsJsonObject().getAsJsonObject("status");
            if (st == null
                || !st.has("currentHealthy")
                || st.get("disruptionsAllowed").getAsInt() != st.get("currentHealthy").getAsInt()) {
              return false;
            }
            healthy += st.get("currentHealthy").getAsInt();
          }
          return healthy == guarded;
        });
  }

  private static int runningOn(RawKube api, String node) throws Exception {
    JsonArray items =
        api.getJson("/api/v1/pods?fieldSelector=spec.nodeName%3D" + node).getAsJsonArray("items");
    int n = 0;
    for (JsonElement e : items) {
      JsonObject p = e.getAsJsonObject();
      if ("Running".equals(RawKube.str(p, "status", "phase"))
          && RawKube.str(p, "metadata", "deletionTimestamp") == null) {
        n++;
      }
    }
    return n;
  }

  /**
   * Runs {@code t} to its exit and returns the seconds it took; fails unless it exited 0 and left
   * every one of {@code nodes} empty.
   */
  static double time(Tool t, RawKube api, Path work, List<String> nodes) throws Exception {
    File log = work.resolve("last-" + t.name().replaceAll("[^a-z]+", "-") + ".log").toFile();
    long start = System.nanoTime();
    Process p =
        new ProcessBuilder(t.command()).redirectErrorStream(true).redirectOutput(log).start();
    boolean finished = p.waitFor(15, TimeUnit.MINUTES);
    double seconds = (System.nanoTime() - start) / 1e9;
    if (!finished) {
      p.destroyForcibly().waitFor();
      throw new IllegalStateException(t.name() + " did not finish in 15 minutes, see " + log);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          t.name() + " failed (exit " + p.exitValue() + "), see " + log);
    }
    for (String node : nodes) {
      int left =
          api.getJson("/api/v1/pods?fieldSelector=spec.nodeName%3D" + node)
              .getAsJsonArray("items")
              .size();
      if (left != 0) {
        throw new IllegalStateException(
            t.name() + " exited 0 but left " + left + " pods on " + node + ", see " + log);
      }
    }
    return seconds;
  }

  static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
