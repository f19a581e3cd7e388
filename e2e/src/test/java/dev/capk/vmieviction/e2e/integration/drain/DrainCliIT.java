package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.label;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.ownedBy;
import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.cli.NodeCli;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The drain command end to end (in-process) against a real control plane: kubectl-like output and
 * exit codes.
 */
class DrainCliIT {
  @RegisterExtension
  static final LocalClusterExtension DRAIN = LocalClusterExtension.shared("drain");

  private static DrainFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new DrainFixture(DRAIN.cluster());
  }

  private record Run(int code, String out, String err) {}

  private static Run drain(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        NodeCli.run(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            false,
            java.util.stream.Stream.concat(
                    java.util.stream.Stream.of("drain"), java.util.Arrays.stream(args))
                .toArray(String[]::new));
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static String kubeconfig() {
    return fx.cluster.kubeconfig().toString();
  }

  @Test
  void drainsANodeWithKubectlStyleOutput() throws Exception {
    String name = unique("cli");
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    V1OwnerReference owner = fx.owner(ns);
    fx.pods(ns, node, "web", 2, ownedBy(owner));
    fx.daemonSet(ns, "agent", node);
    fx.awaitRunning(ns, 3);

    Run r = drain(node, "--kubeconfig", kubeconfig(), "--ignore-daemonsets", "--timeout=60s");
    assertEquals(0, r.code, r.err);
    List<String> lines = r.out.lines().toList();
    assertEquals("node/" + node + " cordoned", lines.get(0));
    assertTrue(lines.contains("evicting pod " + ns + "/web-0"), r.out);
    assertTrue(lines.contains("evicting pod " + ns + "/web-1"), r.out);
    assertTrue(lines.contains("pod/web-0 evicted"), r.out);
    assertTrue(lines.contains("pod/web-1 evicted"), r.out);
    assertEquals("node/" + node + " drained", lines.get(lines.size() - 1));
    assertTrue(
        r.err.startsWith("Warning: ignoring DaemonSet-managed Pods: " + ns + "/agent-"), r.err);
    assertTrue(fx.unschedulable(node));
  }

  @Test
  void anUnknownNodeIsOneLineAndExitOne() {
    Run r = drain("no-such-node", "--kubeconfig", kubeconfig());
    assertEquals(1, r.code);
    assertEquals("Error from server (NotFound): nodes \"no-such-node\" not found", r.err.strip());
  }

  @Test
  void aRefusedDrainListsTheRefusedPods() throws Exception {
    String name = unique("clirefuse");
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    fx.pod(ns, node, "bare");
    Run r = drain(node, "--kubeconfig", kubeconfig());
    assertEquals(1, r.code);
    assertTrue(
        r.err.startsWith(
            "error: unable to drain node \""
                + node
                + "\" due to error: "
                + "cannot delete cannot delete Pods that declare no controller (use --force to"
                + " override): "
                + ns
                + "/bare"),
        r.err);
    assertEquals(1, fx.podsOn(node).size());
  }

  @Test
  void aTimeoutNamesThePendingPodsAndTheirBudget() throws Exception {
    String name = unique("clitimeout");
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    fx.pod(ns, node, "db", ownedBy(fx.owner(ns)), label("app", "db"));
    fx.awaitRunning(ns, 1);
    fx.budget(ns, "db", 1, Map.of("app", "db"), 1);
    Run r =
        drain(
            node, "--kubeconfig", kubeconfig(), "--timeout=2s", "--eviction-retry-interval=500ms");
    assertEquals(1, r.code);
    assertTrue(
        r.err.contains(
            "error when evicting pods/\"db\" -n \""
                + ns
                + "\" (will retry after 500ms): Cannot evict pod"),
        r.err);
    assertTrue(
        r.err.contains(
            "error: unable to drain node \""
                + node
                + "\" due to error: error when evicting pods/\"db\" -n \""
                + ns
                + "\": global timeout reached: 2s, continuing command..."),
        r.err);
    assertTrue(r.err.contains("pod/db -n " + ns + " (blocked by PodDisruptionBudget db)"), r.err);
  }

  @Test
  void aClientDryRunPrintsWhatWouldHappenAndChangesNothing() throws Exception {
    String name = unique("clidry");
    String node = fx.nodes(name, 1).get(0);
    String ns = fx.namespace(name);
    fx.pod(ns, node, "web", ownedBy(fx.owner(ns)));
    Run r = drain(node, "--kubeconfig", kubeconfig(), "--dry-run=client");
    assertEquals(0, r.code, r.err);
    assertEquals(
        List.of(
            "node/" + node + " cordoned (dry run)",
            "evicting pod " + ns + "/web (dry run)",
            "node/" + node + " drained (dry run)"),
        r.out.lines().toList());
    assertFalse(fx.unschedulable(node));
    assertEquals(1, fx.podsOn(node).size());
  }

  @Test
  void anUnreachableServerIsOneLineWithoutCredentials(@TempDir Path dir) throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    String yaml = Files.readString(fx.cluster.kubeconfig());
    Path kc = dir.resolve("unreachable.kubeconfig");
    Files.writeString(kc, yaml.replace(fx.cluster.serverUrl(), "https://127.0.0.1:" + closedPort));
    Run r = drain("some-node", "--kubeconfig", kc.toString());
    assertEquals(1, r.code);
    assertEquals(1, r.err.strip().lines().count(), r.err);
    assertTrue(
        r.err.startsWith("error: unable to drain node \"some-node\": cannot reach the API server"),
        r.err);
    for (String line : yaml.lines().toList()) {
      if (line.contains("-data:")) {
        String secret = line.substring(line.indexOf(':') + 1).strip();
        assertFalse(
            r.err.contains(secret.substring(0, Math.min(40, secret.length()))),
            "credential material in output");
      }
    }
  }
}
