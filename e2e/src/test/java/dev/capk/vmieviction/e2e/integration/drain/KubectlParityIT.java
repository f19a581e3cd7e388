package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.label;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.mirror;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.ownedBy;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.unique;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.withEmptyDir;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.drain.NodeDrainer.Drained;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.cli.NodeCli;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Parity with the real kubectl drain: for each scenario two identical fresh setups (own node, own
 * namespace), one drained by kubectl with the flags, one by the engine with the same options. Both
 * must evict the same pods, leave the same pods, refuse the same pods (and the same scenarios as a
 * whole), succeed or fail alike, and leave the node cordoned alike. Pods are compared by their role
 * label. The cases run a few at a time (each on its own nodes and namespaces): most of their time
 * is kubectl's and our retry waits.
 */
class KubectlParityIT {
  @RegisterExtension
  static final LocalClusterExtension DRAIN = LocalClusterExtension.shared("drain");

  private static DrainFixture fx;
  private static NodeDrainer drainer;

  @BeforeAll
  static void setUp() {
    fx = new DrainFixture(DRAIN.cluster());
    drainer = new NodeDrainer(DRAIN.cluster().client());
  }

  /** Builds one setup on a node in a namespace. */
  @FunctionalInterface
  interface Builder {
    void build(String ns, String node, V1OwnerReference owner) throws Exception;
  }

  private static Arguments scenario(
      String name,
      boolean ghostNode,
      Builder builder,
      List<String> flags,
      Consumer<DrainOptions.Builder> options) {
    return Arguments.of(name, ghostNode, builder, flags, options);
  }

  static Stream<Arguments> scenarios() {
    return Stream.of(
        scenario(
            "managed pods, no flags",
            false,
            (ns, node, o) -> {
              fx.pods(ns, node, "web", 3, ownedBy(o));
              fx.awaitRunning(ns, 3);
            },
            List.of(),
            b -> {}),
        scenario(
            "DaemonSet pod, no flags: refused",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.daemonSet(ns, "agent", node);
            },
            List.of(),
            b -> {}),
        scenario(
            "DaemonSet pod ignored",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.daemonSet(ns, "agent", node);
            },
            List.of("--ignore-daemonsets"),
            b -> b.ignoreAllDaemonSets = true),
        scenario(
            "emptyDir, no flags: refused",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "cache", ownedBy(o), withEmptyDir());
            },
            List.of(),
            b -> {}),
        scenario(
            "emptyDir allowed",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "cache", ownedBy(o), withEmptyDir());
            },
            List.of("--delete-emptydir-data"),
            b -> b.deleteEmptyDirData = true),
        scenario(
            "no controller, no flags: refused",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "bare-1");
              fx.pod(ns, node, "bare-2");
            },
            List.of(),
            b -> {}),
        scenario(
            "no controller, forced",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "bare-1");
            },
            List.of("--force"),
            b -> b.force = true),
        scenario(
            "every kind, every flag",
            false,
            DrainFixtureScenarios::everything,
            List.of("--force", "--ignore-daemonsets", "--delete-emptydir-data"),
            b -> {
              b.force = true;
              b.ignoreAllDaemonSets = true;
              b.deleteEmptyDirData = true;
            }),
        scenario(
            "every kind, --force only: refused",
            false,
            DrainFixtureScenarios::everything,
            List.of("--force"),
            b -> b.force = true),
        scenario(
            "mirror pod skipped",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "static", mirror());
            },
            List.of(),
            b -> {}),
        scenario(
            "pod selector",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "front", ownedBy(o), label("tier", "front"));
              fx.pod(ns, node, "back", ownedBy(o), label("tier", "back"));
              fx.pod(ns, node, "bare");
            },
            List.of("--pod-selector=tier=front"),
            b -> b.podSelector = "tier=front"),
        scenario(
            "finished pod without controller",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "done", withEmptyDir());
              fx.awaitRunning(ns, 2);
              fx.finish(ns, "done", "Succeeded");
            },
            List.of(),
            b -> {}),
        scenario(
            "eviction disabled bypasses a budget",
            false,
            (ns, node, o) -> {
              fx.pods(ns, node, "db", 2, ownedBy(o), label("app", "db"));
              fx.awaitRunning(ns, 2);
              fx.budget(ns, "db", 2, Map.of("app", "db"), 2);
            },
            List.of("--disable-eviction"),
            b -> b.disableEviction = true),
        scenario(
            "budget blocks until the timeout",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "db", ownedBy(o), label("app", "db"));
              fx.pod(ns, node, "web", ownedBy(o));
              fx.awaitRunning(ns, 2);
              fx.budget(ns, "db", 1, Map.of("app", "db"), 1);
            },
            List.of("--timeout=3s"),
            b -> b.timeout = Duration.ofSeconds(3)),
        scenario(
            "server dry run",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "bare");
              fx.awaitRunning(ns, 2);
            },
            List.of("--force", "--dry-run=server"),
            b -> {
              b.force = true;
              b.dryRun = dev.capk.vmieviction.drain.DryRun.SERVER;
            }),
        scenario(
            "client dry run",
            false,
            (ns, node, o) -> {
              fx.pod(ns, node, "web", ownedBy(o));
              fx.pod(ns, node, "bare");
            },
            List.of("--force", "--dry-run=client"),
            b -> {
              b.force = true;
              b.dryRun = dev.capk.vmieviction.drain.DryRun.CLIENT;
            }),
        scenario(
            "skip waiting for pods deleted long ago",
            true,
            (ns, node, o) -> {
              fx.pod(ns, node, "old", ownedBy(o));
              fx.pod(ns, node, "fresh", ownedBy(o));
              fx.deleteGracefully(ns, "old", 1);
              Await.until(
                  "old's deletion 2s overdue",
                  Duration.ofSeconds(30),
                  () ->
                      fx.core
                          .readNamespacedPod("old", ns)
                          .execute()
                          .getMetadata()
                          .getDeletionTimestamp()
                          .toInstant()
                          .plusSeconds(2)
                          .isBefore(Instant.now()));
            },
            List.of("--skip-wait-for-delete-timeout=1"),
            b -> b.skipWaitForDeleteTimeout = Duration.ofSeconds(1)));
  }

  /** What one side (kubectl or engine) did. */
  private record Outcome(
      boolean refused,
      Set<String> refusedRoles,
      boolean succeeded,
      Set<String> evicted,
      Set<String> remaining,
      boolean cordoned,
      String detail) {}

  @ParameterizedTest(name = "{0}")
  @Execution(ExecutionMode.CONCURRENT)
  @MethodSource("scenarios")
  void kubectlAndTheEngineAgree(
      String name,
      boolean ghostNode,
      Builder builder,
      List<String> flags,
      Consumer<DrainOptions.Builder> options)
      throws Exception {
    String base = unique("par");
    String kNode = ghostNode ? fx.ghostNode(base + "-k") : fx.nodes(base + "-k", 1).get(0);
    String eNode = ghostNode ? fx.ghostNode(base + "-e") : fx.nodes(base + "-e", 1).get(0);
    String kNs = fx.namespace(base + "-k");
    String eNs = fx.namespace(base + "-e");
    builder.build(kNs, kNode, fx.owner(kNs));
    builder.build(eNs, eNode, fx.owner(eNs));

    Outcome kubectl = byKubectl(kNode, kNs, flags);
    // The engine retries refused evictions each second, not each 5 s as kubectl does: quicker.
    Outcome engine =
        byEngine(
            eNode,
            DrainOptions.of(
                b -> {
                  b.evictionRetryInterval = Duration.ofSeconds(1);
                  options.accept(b);
                }));

    String both = "\nkubectl: " + kubectl + "\nengine:  " + engine;
    System.out.printf("parity: %s:%s%n", name, both);
    assertEquals(kubectl.refused, engine.refused, "refused as a whole" + both);
    assertEquals(kubectl.refusedRoles, engine.refusedRoles, "refused pods" + both);
    assertEquals(kubectl.succeeded, engine.succeeded, "drained" + both);
    assertEquals(kubectl.evicted, engine.evicted, "evicted pods" + both);
    assertEquals(kubectl.remaining, engine.remaining, "pods left on the node" + both);
    assertEquals(kubectl.cordoned, engine.cordoned, "node cordoned" + both);
  }

  private Outcome byKubectl(String node, String ns, List<String> flags) throws Exception {
    Map<String, V1Pod> before = fx.podsOn(node);
    List<String> args = new ArrayList<>(List.of("drain", node));
    args.addAll(flags);
    Kubectl.Result r =
        fx.cluster.kubectl().run(null, Duration.ofMinutes(2), args.toArray(String[]::new));
    Map<String, V1Pod> after = fx.podsOn(node);
    boolean refused = !r.ok() && r.stderr().contains("cannot delete");
    Set<String> refusedRoles = new TreeSet<>();
    if (refused) {
      Map<String, String> roleByName = new HashMap<>();
      before
          .values()
          .forEach(
              p ->
                  roleByName.put(
                      p.getMetadata().getName(),
                      p.getMetadata().getLabels().get(DrainFixture.ROLE)));
      Matcher m =
          Pattern.compile(Pattern.quote(ns) + "/([a-z0-9][-a-z0-9.]*[a-z0-9])").matcher(r.stderr());
      while (m.find()) {
        refusedRoles.add(roleByName.getOrDefault(m.group(1), "?" + m.group(1)));
      }
    }
    return new Outcome(
        refused,
        refusedRoles,
        r.ok(),
        gone(before, after),
        DrainFixture.roles(after.values()),
        fx.unschedulable(node),
        "exit " + r.exitCode() + ", stderr: " + r.stderr().strip());
  }

  private Outcome byEngine(String node, DrainOptions options) throws Exception {
    Map<String, V1Pod> before = fx.podsOn(node);
    boolean refused = false;
    Set<String> refusedRoles = new TreeSet<>();
    boolean succeeded;
    String detail;
    try {
      // As the drain command: cordon first (a dry run only says it would).
      new Cordoner(new RawApi(DRAIN.cluster().client()))
          .setUnschedulable(node, true, options.dryRun());
      Drained r = drainer.drain(node, options, NodeDrainer.DrainOutput.NONE);
      succeeded = r.error().isEmpty();
      detail = r.toString();
      Map<String, V1Pod> afterDrain = fx.podsOn(node);
      if (options.dryRun() == dev.capk.vmieviction.drain.DryRun.NONE) {
        // The engine's own account agrees with what happened to the node.
        Set<String> reported = new TreeSet<>();
        for (PodRef p : r.evicted()) {
          reported.add(before.get(p.uid()).getMetadata().getLabels().get(DrainFixture.ROLE));
        }
        assertEquals(gone(before, afterDrain), reported, "engine result vs node: " + detail);
      }
    } catch (DrainRefusedException e) {
      refused = true;
      succeeded = false;
      detail = e.getMessage();
      for (PodRef p : e.refusedPods()) {
        refusedRoles.add(before.get(p.uid()).getMetadata().getLabels().get(DrainFixture.ROLE));
      }
    }
    Map<String, V1Pod> after = fx.podsOn(node);
    return new Outcome(
        refused,
        refusedRoles,
        succeeded,
        gone(before, after),
        DrainFixture.roles(after.values()),
        fx.unschedulable(node),
        detail);
  }

  // ---- The command line: this project's drain/cordon/uncordon against kubectl's, word for word.

  /** Builds one side of a command scenario: pods on the side's two nodes, in its namespace. */
  @FunctionalInterface
  interface Sides {
    void build(String ns, List<String> nodes, V1OwnerReference owner) throws Exception;
  }

  private static Arguments command(String name, Sides setup, boolean sameOutput, String... args) {
    return Arguments.of(name, setup, sameOutput, List.of(args));
  }

  private static final Sides NOTHING = (ns, nodes, o) -> {};

  /**
   * Command forms and flags. Tokens: {N0} {N1} the side's nodes, {SEL} a selector matching both,
   * {CTX} {CLUSTER} {USER} the kubeconfig's names.
   */
  static Stream<Arguments> commands() {
    return Stream.of(
        command(
            "cordon two nodes, one already cordoned", cordoned(1), true, "cordon", "{N0}", "{N1}"),
        command("uncordon by selector", cordoned(0), true, "uncordon", "-l", "{SEL}"),
        command("cordon, client dry run", NOTHING, true, "cordon", "{N0}", "--dry-run=client"),
        command(
            "cordon, server dry run", NOTHING, true, "cordon", "-l", "{SEL}", "--dry-run=server"),
        command(
            "cordon a node that does not exist", NOTHING, true, "cordon", "{N0}", "no-such-node"),
        command("cordon with no node", NOTHING, true, "cordon"),
        command("uncordon refuses a drain flag", NOTHING, true, "uncordon", "{N0}", "--force"),
        command(
            "drain by selector, two nodes, small pages, no grace",
            (ns, nodes, o) -> {
              fx.pods(ns, nodes.get(0), "a", 2, ownedBy(o));
              fx.pods(ns, nodes.get(1), "b", 2, ownedBy(o));
              fx.awaitRunning(ns, 4);
            },
            true,
            "drain",
            "-l",
            "{SEL}",
            "--chunk-size=1",
            "--grace-period=0"),
        command(
            "drain two nodes, one refused",
            (ns, nodes, o) -> {
              fx.pod(ns, nodes.get(0), "web", ownedBy(o));
              fx.pod(ns, nodes.get(1), "bare");
              fx.awaitRunning(ns, 2);
            },
            true,
            "drain",
            "{N0}",
            "{N1}"),
        command(
            "drain with a selector that matches nothing",
            NOTHING,
            true,
            "drain",
            "-l",
            "no-such-label=x"),
        command("drain a node name and a selector", NOTHING, true, "drain", "{N0}", "-l", "{SEL}"),
        command(
            "drain a missing node among existing ones",
            NOTHING,
            true,
            "drain",
            "{N0}",
            "no-such-node"),
        command(
            "drain refuses an unknown flag", NOTHING, true, "drain", "{N0}", "--no-such-flag=1"),
        command(
            "drain refuses the flag kubectl 1.35 removed",
            NOTHING,
            true,
            "drain",
            "{N0}",
            "--delete-local-data"),
        command("drain with a malformed selector", NOTHING, true, "drain", "-l", "a in (b"),
        command("cordon with a malformed selector", NOTHING, true, "cordon", "-l", "a=(b"),
        command(
            "drain a pod with local storage, allowed",
            (ns, nodes, o) -> {
              fx.pod(ns, nodes.get(0), "cache", ownedBy(o), withEmptyDir());
              fx.awaitRunning(ns, 1);
            },
            true,
            "drain",
            "{N0}",
            "--delete-emptydir-data"),
        command(
            "drain a pod without a controller, forced",
            (ns, nodes, o) -> {
              fx.pod(ns, nodes.get(0), "bare");
              fx.awaitRunning(ns, 1);
            },
            true,
            "drain",
            "{N0}",
            "--force"),
        command("drain refuses an unknown shorthand", NOTHING, true, "drain", "{N0}", "-x"),
        command(
            "drain with the connection flags",
            (ns, nodes, o) -> {
              fx.pod(ns, nodes.get(0), "web", ownedBy(o));
              fx.awaitRunning(ns, 1);
            },
            true,
            "drain",
            "{N0}",
            "--context={CTX}",
            "--cluster={CLUSTER}",
            "--user={USER}",
            "--request-timeout=30s",
            "-n",
            "default"),
        command(
            "drain with a pod selector and eviction disabled",
            (ns, nodes, o) -> {
              fx.pod(ns, nodes.get(0), "front", ownedBy(o), label("tier", "front"));
              fx.pod(ns, nodes.get(0), "back", ownedBy(o), label("tier", "back"));
              fx.awaitRunning(ns, 2);
            },
            true,
            "drain",
            "{N0}",
            "--pod-selector=tier=front",
            "--disable-eviction"),
        // Which of the two pods goes first is a race in our concurrent drain: compare counts.
        command(
            "two nodes sharing a budget that allows one disruption",
            (ns, nodes, o) -> {
              fx.pod(ns, nodes.get(0), "db-0", ownedBy(o), label("app", "db"));
              fx.pod(ns, nodes.get(1), "db-1", ownedBy(o), label("app", "db"));
              fx.awaitRunning(ns, 2);
              fx.budget(ns, "db", 1, Map.of("app", "db"), 2);
            },
            false,
            "drain",
            "-l",
            "{SEL}",
            "--timeout=8s"));
  }

  private static Sides cordoned(int index) {
    return (ns, nodes, o) -> fx.cluster.kubectl().runOrFail(null, "cordon", nodes.get(index));
  }

  /** What one command did: exit code, kubectl's stable lines, and the nodes' state after. */
  private record CommandOutcome(
      int exitCode,
      List<String> stdout,
      List<String> stderr,
      int podsGone,
      Set<String> podsLeft,
      List<Boolean> cordoned,
      String rawStderr) {}

  /**
   * The stderr lines that are compared: all but the retry chatter of a budget that refuses, whose
   * count follows timing (kubectl retries every 5 s, our drain when the budget allows) and whose
   * pod comes first in our concurrent drain by race.
   */
  private static final Pattern RETRY_CHATTER =
      Pattern.compile(
          "^error when evicting pods/\"[^\"]+\" -n \"NS\" \\(will retry after 5s\\): .*$");

  @ParameterizedTest(name = "{0}")
  @Execution(ExecutionMode.CONCURRENT)
  @MethodSource("commands")
  void theCommandAndKubectlAgreeLineForLine(
      String name, Sides setup, boolean sameOutput, List<String> args) throws Exception {
    String base = unique("cmd");
    String kGroup = base + "-k";
    String eGroup = base + "-e";
    List<String> kNodes = fx.cluster.kwokNodes().create(kGroup, 2, Map.of("parity-group", kGroup));
    List<String> eNodes = fx.cluster.kwokNodes().create(eGroup, 2, Map.of("parity-group", eGroup));
    String kNs = fx.namespace(kGroup);
    String eNs = fx.namespace(eGroup);
    setup.build(kNs, kNodes, fx.owner(kNs));
    setup.build(eNs, eNodes, fx.owner(eNs));

    CommandOutcome kubectl = byKubectlCommand(args, kNodes, kNs, kGroup);
    CommandOutcome ours = byOurCommand(args, eNodes, eNs, eGroup);

    String both = "\nkubectl: " + kubectl + "\nours:    " + ours;
    System.out.printf("command parity: %s:%s%n", name, both);
    assertEquals(kubectl.exitCode, ours.exitCode, "exit code" + both);
    assertEquals(kubectl.cordoned, ours.cordoned, "nodes cordoned" + both);
    assertEquals(kubectl.podsGone, ours.podsGone, "pods evicted or deleted" + both);
    if (sameOutput) {
      assertEquals(kubectl.stdout, ours.stdout, "stdout lines" + both);
      assertEquals(kubectl.stderr, ours.stderr, "kubectl's error lines" + both);
      assertEquals(kubectl.podsLeft, ours.podsLeft, "pods left" + both);
    }
  }

  private CommandOutcome byKubectlCommand(
      List<String> args, List<String> nodes, String ns, String group) throws Exception {
    Map<String, V1Pod> before = podsOn(nodes);
    Kubectl.Result r =
        fx.cluster
            .kubectl()
            .run(null, Duration.ofMinutes(2), expand(args, nodes, group).toArray(String[]::new));
    return outcome(r.exitCode(), r.stdout(), r.stderr(), before, nodes, ns, group);
  }

  private CommandOutcome byOurCommand(
      List<String> args, List<String> nodes, String ns, String group) throws Exception {
    Map<String, V1Pod> before = podsOn(nodes);
    List<String> all = new ArrayList<>(expand(args, nodes, group));
    all.add("--kubeconfig=" + fx.cluster.kubeconfig());
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int code =
        NodeCli.run(
            new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
            new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8),
            false,
            all.toArray(String[]::new));
    // The one intended difference: a plugin's help hint names the plugin's own command.
    return outcome(
        code,
        out.toString(java.nio.charset.StandardCharsets.UTF_8),
        err.toString(java.nio.charset.StandardCharsets.UTF_8)
            .replace("kubectl fastdrain ", "kubectl "),
        before,
        nodes,
        ns,
        group);
  }

  private static List<String> expand(List<String> args, List<String> nodes, String group) {
    String yaml;
    try {
      yaml = java.nio.file.Files.readString(fx.cluster.kubeconfig());
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    return args.stream()
        .map(
            a ->
                a.replace("{N0}", nodes.get(0))
                    .replace("{N1}", nodes.get(1))
                    .replace("{SEL}", "parity-group=" + group)
                    .replace("{CTX}", field(yaml, "current-context: "))
                    .replace("{CLUSTER}", field(yaml, "    cluster: "))
                    .replace("{USER}", field(yaml, "    user: ")))
        .toList();
  }

  /** The value of the first line starting with {@code prefix} (the harness writes one of each). */
  private static String field(String yaml, String prefix) {
    return yaml.lines()
        .filter(l -> l.startsWith(prefix))
        .map(l -> l.substring(prefix.length()).strip())
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no " + prefix.strip() + " in kubeconfig"));
  }

  private CommandOutcome outcome(
      int code,
      String stdout,
      String stderr,
      Map<String, V1Pod> before,
      List<String> nodes,
      String ns,
      String group)
      throws Exception {
    Map<String, V1Pod> after = podsOn(nodes);
    UnaryOperator<String> normalize =
        l ->
            l.replace(nodes.get(0), "N0")
                .replace(nodes.get(1), "N1")
                .replace(ns, "NS")
                .replace(group, "GROUP");
    // Lines of different nodes interleave in our concurrent drain: compare them as sets.
    List<String> out = stdout.lines().map(normalize).sorted().toList();
    List<String> err =
        stderr
            .lines()
            .map(normalize)
            .filter(l -> !RETRY_CHATTER.matcher(l).matches())
            .sorted()
            .toList();
    List<Boolean> cordoned = new ArrayList<>();
    for (String n : nodes) {
      cordoned.add(fx.unschedulable(n));
    }
    int gone = (int) before.keySet().stream().filter(uid -> !after.containsKey(uid)).count();
    return new CommandOutcome(
        code, out, err, gone, DrainFixture.roles(after.values()), cordoned, stderr.strip());
  }

  private static Map<String, V1Pod> podsOn(List<String> nodes) throws Exception {
    Map<String, V1Pod> all = new HashMap<>();
    for (String n : nodes) {
      all.putAll(fx.podsOn(n));
    }
    return all;
  }

  /** Roles of the pods present before and gone (by UID) after. */
  private static Set<String> gone(Map<String, V1Pod> before, Map<String, V1Pod> after) {
    List<V1Pod> gone =
        before.entrySet().stream()
            .filter(e -> !after.containsKey(e.getKey()))
            .map(Map.Entry::getValue)
            .toList();
    return DrainFixture.roles(gone);
  }

  /** Builders shared by several scenarios. */
  static final class DrainFixtureScenarios {
    private DrainFixtureScenarios() {}

    static void everything(String ns, String node, V1OwnerReference o) throws Exception {
      fx.pod(ns, node, "web", ownedBy(o));
      fx.pod(ns, node, "cache", ownedBy(o), withEmptyDir());
      fx.pod(ns, node, "bare");
      fx.pod(ns, node, "static", mirror());
      fx.daemonSet(ns, "agent", node);
    }
  }
}
