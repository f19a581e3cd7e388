package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The drain CLI installed the way the README tells an admin to: the launcher {@code
 * hack/plugin/kubectl-fastdrain} and the built jar copied into one directory on PATH, then run by
 * the real kubectl of the harness's build as {@code kubectl fastdrain ...}. The launcher is copied
 * with its file mode as checked out (no chmod here): a launcher that is not executable in the
 * repository is not a plugin kubectl will run, and this test fails.
 */
class KubectlPluginIT {
  static final String LAUNCHER = "kubectl-fastdrain";

  @RegisterExtension
  static final LocalClusterExtension DRAIN =
      LocalClusterExtension.shared("drain", LocalCluster.Builder::withAll);

  @TempDir static Path pluginDir;

  private static DrainFixture fx;

  @BeforeAll
  static void install() throws IOException {
    fx = new DrainFixture(DRAIN.cluster());
    Files.copy(
        RepoPaths.root().resolve("hack/plugin").resolve(LAUNCHER), pluginDir.resolve(LAUNCHER));
    Files.copy(ControllerProcess.jar(), pluginDir.resolve("vmi-eviction-controller.jar"));
  }

  private record Run(int code, String out, String err) {}

  /** The real kubectl, with only the plugin directory (and the JDK) added in front of PATH. */
  private static Run kubectl(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(fx.cluster.binaries().kubectl().toString());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    Path javaBin = Path.of(System.getProperty("java.home"), "bin");
    env.put(
        "PATH",
        pluginDir
            + File.pathSeparator
            + javaBin
            + File.pathSeparator
            + env.getOrDefault("PATH", ""));
    env.remove("FASTDRAIN_JAR");
    env.remove("JAVA");
    env.put("KUBECONFIG", fx.cluster.kubeconfig().toString());
    Process p = pb.start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p, true));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p, false));
    if (!p.waitFor(2, TimeUnit.MINUTES)) {
      p.destroyForcibly().waitFor();
      throw new IllegalStateException("kubectl " + String.join(" ", args) + " did not finish");
    }
    return new Run(p.exitValue(), out.join(), err.join());
  }

  private static String read(Process p, boolean stdout) {
    try (var in = stdout ? p.getInputStream() : p.getErrorStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  @Test
  void kubectlListsTheLauncherAsAPlugin() throws Exception {
    Run r = kubectl("plugin", "list");
    assertEquals(0, r.code, r.err);
    assertTrue(
        r.out.lines().anyMatch(l -> l.equals(pluginDir.resolve(LAUNCHER).toString())), r.out);
    assertFalse(r.err.contains(LAUNCHER), r.err);
  }

  @Test
  void kubectlFastdrainCordonsAndUncordonsANode() throws Exception {
    String node = fx.nodes(unique("plugin"), 1).get(0);
    String kubeconfig = fx.cluster.kubeconfig().toString();

    Run cordon = kubectl("fastdrain", "cordon", node, "--kubeconfig", kubeconfig);
    assertEquals(0, cordon.code, cordon.err);
    assertEquals(List.of("node/" + node + " cordoned"), cordon.out.lines().toList());
    assertTrue(fx.unschedulable(node));

    Run uncordon = kubectl("fastdrain", "uncordon", node, "--kubeconfig", kubeconfig);
    assertEquals(0, uncordon.code, uncordon.err);
    assertEquals(List.of("node/" + node + " uncordoned"), uncordon.out.lines().toList());
    assertFalse(fx.unschedulable(node));
    assertEquals("", cordon.err + uncordon.err, "no log line at the default verbosity");
  }

  @Test
  void thePluginsHelpAndVersionAnswerWithExitZero() throws Exception {
    Run help = kubectl("fastdrain", "--help");
    assertEquals(0, help.code, help.err);
    for (String command : List.of("drain", "cordon", "uncordon")) {
      assertTrue(help.out.contains("\n  " + command + " "), "names " + command + ":\n" + help.out);
    }
    Run version = kubectl("fastdrain", "--version");
    assertEquals(0, version.code, version.err);
    assertTrue(
        version.out.strip().matches("vmi-eviction-controller \\d+\\.\\d+\\.\\d+.*"), version.out);
    Run none = kubectl("fastdrain");
    assertEquals(1, none.code, "no command is a usage error");
  }

  @Test
  void atTheDefaultVerbosityADrainWritesKubectlsLinesOnlyAndWithVOneItsLogLinesToo()
      throws Exception {
    String node = fx.nodes(unique("pluginlogs"), 1).get(0);
    String kubeconfig = fx.cluster.kubeconfig().toString();

    Run quiet = kubectl("fastdrain", "drain", node, "--kubeconfig", kubeconfig);
    assertEquals(0, quiet.code, quiet.err);
    assertEquals(
        List.of("node/" + node + " cordoned", "node/" + node + " drained"),
        quiet.out.lines().toList());
    assertEquals("", quiet.err, "no log line at the default verbosity");

    Run verbose = kubectl("fastdrain", "uncordon", node, "--kubeconfig", kubeconfig, "-v=1");
    assertEquals(0, verbose.code, verbose.err);
    assertTrue(
        verbose.err.lines().anyMatch(l -> l.contains(" INFO ") && l.contains("node=" + node)),
        verbose.err);
  }
}
