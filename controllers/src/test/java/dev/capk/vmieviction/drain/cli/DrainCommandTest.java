package dev.capk.vmieviction.drain.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DryRun;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Flag parsing and error output of the drain CLI; nothing here talks to a cluster. */
class DrainCommandTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private static DrainCommand parsed(String... args) {
    DrainCommand c = new DrainCommand(System.out, System.err, false);
    new CommandLine(c).parseArgs(args);
    return c;
  }

  private static DrainOptions options(String... args) {
    DrainCommand c = parsed(args);
    c.check(NodeCommand.parseDryRun(c.dryRun));
    return c.options;
  }

  private int run(String... args) {
    return NodeCli.run(
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        false,
        java.util.stream.Stream.concat(
                java.util.stream.Stream.of("drain"), java.util.Arrays.stream(args))
            .toArray(String[]::new));
  }

  private String stderr() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void noFlagsMeansKubectlDefaults() {
    DrainCommand c = parsed("node-1");
    assertEquals(java.util.List.of("node-1"), c.names);
    c.check(DryRun.NONE);
    assertEquals(DrainOptions.defaults().toString(), c.options.toString());
  }

  @Test
  void kubectlFlagNamesMapToTheEngineOptions() {
    DrainOptions o =
        options(
            "node-1",
            "--force",
            "--ignore-daemonsets",
            "--delete-emptydir-data",
            "--grace-period=30",
            "--timeout=1m30s",
            "--pod-selector",
            "app=web,tier!=db",
            "--disable-eviction",
            "--skip-wait-for-delete-timeout=20",
            "--dry-run=server",
            "--chunk-size=50");
    assertTrue(o.force());
    assertTrue(o.ignoreAllDaemonSets());
    assertTrue(o.deleteEmptyDirData());
    assertEquals(30, o.gracePeriodSeconds());
    assertEquals(Duration.ofSeconds(90), o.timeout());
    assertEquals("app=web,tier!=db", o.podSelector());
    assertTrue(o.disableEviction());
    assertEquals(Duration.ofSeconds(20), o.skipWaitForDeleteTimeout());
    assertEquals(DryRun.SERVER, o.dryRun());
    assertEquals(50, o.chunkSize());
  }

  @Test
  void booleanFlagsTakeOptionalValuesLikePflagWithoutSwallowingTheNode() {
    DrainCommand c = parsed("--force", "node-1");
    assertEquals(java.util.List.of("node-1"), c.names);
    assertTrue(c.force);
    assertFalse(options("node-1", "--force=false").force());
    assertTrue(options("node-1", "--ignore-daemonsets=true").ignoreAllDaemonSets());
    assertTrue(options("node-1", "--delete-emptydir-data").deleteEmptyDirData());
    assertThrows(
        CommandLine.UnmatchedArgumentException.class,
        () -> options("node-1", "--delete-local-data"),
        "the alias kubectl 1.35 no longer has");
  }

  @Test
  void negativeValuesMeanWhatKubectlMeans() {
    assertEquals(-1, options("n", "--grace-period=-5").gracePeriodSeconds());
    assertEquals(
        Duration.ZERO,
        options("n", "--skip-wait-for-delete-timeout=-3").skipWaitForDeleteTimeout());
    assertEquals(0, options("n", "--chunk-size=0").chunkSize());
  }

  @Test
  void dryRunValues() {
    assertEquals(DryRun.NONE, options("n", "--dry-run=none").dryRun());
    assertEquals(DryRun.CLIENT, options("n", "--dry-run=client").dryRun());
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> options("n", "--dry-run=maybe"));
    assertEquals(
        "Invalid dry-run value (maybe). Must be \"none\", \"server\", or \"client\".",
        e.getMessage());
  }

  @Test
  void invalidSelectorIsAOneLineErrorBeforeAnythingHappens() {
    int code =
        run("node-1", "--pod-selector", "app in (web", "--kubeconfig", "/nonexistent/never-read");
    assertEquals(1, code);
    String e = stderr();
    assertTrue(e.startsWith("error: --pod-selector=app in (web must be a valid label selector"), e);
    assertEquals(1, e.strip().lines().count(), e);
    assertFalse(
        e.contains("kubeconfig"), "the selector is checked before the kubeconfig is read: " + e);
  }

  @Test
  void invalidDryRunIsAnError() {
    assertEquals(1, run("node-1", "--dry-run=maybe"));
    assertTrue(stderr().contains("Invalid dry-run value (maybe)"));
  }

  @Test
  void badTimeoutAndMissingNodeAreUsageErrorsWithExitOneAsInKubectl() {
    assertEquals(1, run("node-1", "--timeout=30"));
    assertTrue(stderr().contains("missing unit"), stderr());
    err.reset();
    assertEquals(1, run());
    assertEquals(
        "error: USAGE: drain NODE [flags]\n"
            + "See 'kubectl fastdrain drain -h' for help and examples\n",
        stderr());
  }

  @Test
  void unknownFlagsAreRefusedByNameWithKubectlsWording() {
    assertEquals(1, run("node-1", "--no-such-flag=3"));
    assertEquals(
        "error: unknown flag: --no-such-flag\n"
            + "See 'kubectl fastdrain drain --help' for usage.\n",
        stderr());
    err.reset();
    assertEquals(1, run("node-1", "-x"));
    assertTrue(stderr().startsWith("error: unknown shorthand flag: 'x' in -x\n"), stderr());
    err.reset();
    // kubectl global flags this command does not implement are refused, not ignored.
    assertEquals(1, run("node-1", "--as=admin"));
    assertTrue(stderr().startsWith("error: unknown flag: --as\n"), stderr());
  }

  @Test
  void nodeNamesAndASelectorAreExclusiveAsInKubectl() {
    assertEquals(1, run("node-1", "-l", "pool=a"));
    assertTrue(
        stderr().startsWith("error: cannot specify both a node name and a --selector option\n"),
        stderr());
    DrainCommand c = parsed("a", "b", "--force", "c");
    assertEquals(java.util.List.of("a", "b", "c"), c.names);
    assertEquals("pool in (a,b)", parsed("--selector", "pool in (a,b)").selector);
  }

  @Test
  void cordonAndUncordonTakeOnlyTheirFlags() {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
    assertEquals(1, NodeCli.run(o, e, false, "cordon"));
    assertTrue(stderr().startsWith("error: USAGE: cordon NODE [flags]\n"), stderr());
    err.reset();
    assertEquals(1, NodeCli.run(o, e, false, "uncordon", "node-1", "--force"));
    assertEquals(
        "error: unknown flag: --force\n" + "See 'kubectl fastdrain uncordon --help' for usage.\n",
        stderr());
    err.reset();
    assertEquals(1, NodeCli.run(o, e, false, "cordon", "node-1", "--dry-run=maybe"));
    assertTrue(stderr().contains("Invalid dry-run value (maybe)"), stderr());
  }

  @Test
  void requestTimeoutIsSecondsOrADurationAsInKubectl() {
    assertEquals(
        Duration.ofSeconds(5), parsed("n", "--request-timeout=5").connection.requestTimeout);
    assertEquals(
        Duration.ofMillis(1500), parsed("n", "--request-timeout=1.5s").connection.requestTimeout);
    assertEquals(Duration.ZERO, parsed("n").connection.requestTimeout);
    assertEquals(1, run("n", "--request-timeout=soon"));
    assertTrue(stderr().contains("invalid timeout value"), stderr());
  }

  @Test
  void missingKubeconfigIsAOneLineError(@TempDir Path dir) {
    Path missing = dir.resolve("nope.yaml");
    assertEquals(1, run("node-1", "--kubeconfig", missing.toString()));
    assertEquals("error: kubeconfig " + missing + " does not exist", stderr().strip());
  }

  @Test
  void brokenKubeconfigNeverEchoesItsContent(@TempDir Path dir) throws IOException {
    String token = "s3cr3t-token-abcdefghijklmnopqrstuvwxyz0123456789";
    Path broken = dir.resolve("broken.yaml");
    Files.writeString(
        broken,
        "apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: "
            + token
            + "\n   bad: [indent\n");
    assertEquals(1, run("node-1", "--kubeconfig", broken.toString()));
    String all = stderr() + out.toString(StandardCharsets.UTF_8);
    assertTrue(all.startsWith("error: kubeconfig " + broken), all);
    assertFalse(all.contains(token), all);
    assertFalse(all.contains("Exception"), all);
  }

  @Test
  void kubeconfigWithoutContextOrServerIsRefusedClearly(@TempDir Path dir) throws IOException {
    Path noCtx = dir.resolve("noctx.yaml");
    Files.writeString(
        noCtx, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
    assertEquals(1, run("node-1", "--kubeconfig", noCtx.toString()));
    assertTrue(stderr().contains("has no contexts"), stderr());
  }

  @Test
  void unknownContextIsRefusedClearly(@TempDir Path dir) throws IOException {
    Path kc = dir.resolve("kc.yaml");
    Files.writeString(
        kc,
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
            + "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
            + "contexts:\n- name: a\n  context:\n    cluster: c\n    user: u\n"
            + "users:\n- name: u\n  user:\n    token: t0ken\n");
    assertEquals(1, run("node-1", "--kubeconfig", kc.toString(), "--context", "b"));
    assertEquals("error: context \"b\" does not exist", stderr().strip());
  }

  @Test
  void unknownClusterOrUserIsRefusedWithKubectlsWording(@TempDir Path dir) throws IOException {
    Path kc = dir.resolve("kc.yaml");
    Files.writeString(
        kc,
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
            + "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
            + "contexts:\n- name: a\n  context:\n    cluster: c\n    user: u\n"
            + "users:\n- name: u\n  user:\n    token: t0ken\n");
    assertEquals(1, run("node-1", "--kubeconfig", kc.toString(), "--cluster", "nope"));
    assertEquals("error: cluster \"nope\" does not exist", stderr().strip());
    err.reset();
    assertEquals(1, run("node-1", "--kubeconfig", kc.toString(), "--user=nope"));
    assertEquals("error: auth info \"nope\" does not exist", stderr().strip());
  }

  @Test
  void helpPrintsKubectlFlagNames() {
    assertEquals(0, run("--help"));
    String help = out.toString(StandardCharsets.UTF_8);
    for (String flag :
        new String[] {
          "--kubeconfig",
          "--force",
          "--ignore-daemonsets",
          "--delete-emptydir-data",
          "--grace-period",
          "--timeout",
          "--pod-selector",
          "--disable-eviction",
          "--skip-wait-for-delete-timeout",
          "--dry-run",
          "--chunk-size",
          "--selector",
          "--context",
          "--cluster",
          "--user",
          "--request-timeout"
        }) {
      assertTrue(help.contains(flag), flag);
    }
  }
}
