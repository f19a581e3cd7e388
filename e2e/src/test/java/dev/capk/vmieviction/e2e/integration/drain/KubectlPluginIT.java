package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.api.Assumptions;
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
  static final LocalClusterExtension DRAIN = LocalClusterExtension.shared("drain");

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
    return kubectl(pluginDir, Map.of(), args);
  }

  /** The real kubectl, with {@code dir} (and the JDK) in front of PATH and {@code extraEnv} set. */
  private static Run kubectl(Path dir, Map<String, String> extraEnv, String... args)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.add(fx.cluster.binaries().kubectl().toString());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    Path javaBin = Path.of(System.getProperty("java.home"), "bin");
    env.put(
        "PATH",
        dir + File.pathSeparator + javaBin + File.pathSeparator + env.getOrDefault("PATH", ""));
    env.remove("FASTDRAIN_JAR");
    env.remove("JAVA");
    env.remove("JDK_JAVA_OPTIONS");
    env.remove("FASTDRAIN_LAUNCHER_DEBUG");
    env.put("KUBECONFIG", fx.cluster.kubeconfig().toString());
    env.putAll(extraEnv);
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

  /**
   * The jar is built for Java 25. A JDK 17 (its release file, and a java that would leave a mark if
   * started) as JAVA: the launcher names it and the version it needs, and never starts it.
   */
  @Test
  void anOlderJavaIsNamedAndNeverStarted(@TempDir Path jdk) throws Exception {
    Files.createDirectories(jdk.resolve("bin"));
    Files.writeString(jdk.resolve("release"), "JAVA_VERSION=\"17.0.15\"\n");
    Path java = jdk.resolve("bin/java");
    Files.writeString(java, "#!/bin/sh\ntouch \"$0.started\"\n");
    java.toFile().setExecutable(true);
    Run r = kubectl(pluginDir, Map.of("JAVA", java.toString()), "fastdrain", "cordon", "any");
    assertEquals(1, r.code, r.err);
    assertEquals(
        "error: kubectl-fastdrain: " + java + " is Java 17; it needs Java 25 or newer (set JAVA)",
        r.err.strip());
    assertFalse(Files.exists(jdk.resolve("bin/java.started")), "the old java was started");
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

  @Test
  void theFirstRunMakesAnAheadOfTimeCacheBesideTheJarAndLaterRunsMapIt(@TempDir Path dir)
      throws Exception {
    Files.copy(RepoPaths.root().resolve("hack/plugin").resolve(LAUNCHER), dir.resolve(LAUNCHER));
    Files.copy(ControllerProcess.jar(), dir.resolve("vmi-eviction-controller.jar"));
    String node = fx.nodes(unique("plugincds"), 1).get(0);
    String kubeconfig = fx.cluster.kubeconfig().toString();
    assertEquals(List.of(), archives(dir));

    Run first = kubectl(dir, Map.of(), "fastdrain", "cordon", node, "--kubeconfig", kubeconfig);
    assertEquals(0, first.code, first.err);
    assertEquals(List.of("node/" + node + " cordoned"), first.out.lines().toList());
    assertEquals("", first.err, "making the cache writes nothing on stderr");
    List<Path> archives = archives(dir);
    assertEquals(1, archives.size(), "one cache beside the jar: " + archives);
    try (var files = Files.list(dir)) {
      assertEquals(
          List.of(), files.filter(f -> f.toString().endsWith(".tmp")).toList(), "no temp file");
    }

    Run second = kubectl(dir, Map.of(), "fastdrain", "uncordon", node, "--kubeconfig", kubeconfig);
    assertEquals(0, second.code, second.err);
    assertEquals(List.of("node/" + node + " uncordoned"), second.out.lines().toList());
    assertEquals("", second.err, "using the cache writes nothing on stderr");

    Run debug =
        kubectl(
            dir,
            Map.of("FASTDRAIN_LAUNCHER_DEBUG", "1"),
            "fastdrain",
            "cordon",
            node,
            "--kubeconfig",
            kubeconfig);
    assertEquals(0, debug.code, debug.err);
    assertEquals(1, debug.err.lines().count(), debug.err);
    assertTrue(debug.err.contains(" -XX:AOTCache=" + archives.get(0) + " -jar "), debug.err);
    assertTrue(sharedFromArchive(dir, Map.of(), node), "the jar's classes come from the cache");
    assertEquals(archives, archives(dir), "the cache is kept, not made again");
  }

  @Test
  void aReadOnlyJarDirectoryKeepsTheArchiveInTheUsersCacheDirectory(
      @TempDir Path jarDir, @TempDir Path cache) throws Exception {
    Path jar = Files.copy(ControllerProcess.jar(), jarDir.resolve("vmi-eviction-controller.jar"));
    // JAVA and FASTDRAIN_JAR as a user sets them: the jar elsewhere than the launcher.
    Map<String, String> env =
        Map.of(
            "FASTDRAIN_JAR",
            jar.toString(),
            "JAVA",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "XDG_CACHE_HOME",
            cache.toString());
    String node = fx.nodes(unique("pluginro"), 1).get(0);
    String kubeconfig = fx.cluster.kubeconfig().toString();
    boolean immutable = readOnly(jarDir);
    try {
      Run first = kubectl(pluginDir, env, "fastdrain", "cordon", node, "--kubeconfig", kubeconfig);
      assertEquals(0, first.code, first.err);
      assertEquals(List.of("node/" + node + " cordoned"), first.out.lines().toList());
      assertEquals("", first.err);
      assertEquals(List.of(), archives(jarDir));
      assertEquals(1, archives(cache.resolve("kubectl-fastdrain")).size());

      Run second =
          kubectl(pluginDir, env, "fastdrain", "uncordon", node, "--kubeconfig", kubeconfig);
      assertEquals(0, second.code, second.err);
      assertEquals("", second.err);
      assertTrue(sharedFromArchive(pluginDir, env, node), "the jar's classes come from the cache");
    } finally {
      if (immutable) {
        new ProcessBuilder("chattr", "-i", jarDir.toString()).start().waitFor();
      }
      jarDir.toFile().setWritable(true);
    }
  }

  /**
   * Makes {@code dir} read-only for this process: its mode, and where that does not bind (root),
   * the immutable attribute; the test is skipped where neither does. Returns whether it set the
   * attribute.
   */
  private static boolean readOnly(Path dir) throws Exception {
    Files.setPosixFilePermissions(
        dir, java.nio.file.attribute.PosixFilePermissions.fromString("r-xr-xr-x"));
    if (!Files.isWritable(dir)) {
      return false;
    }
    int chattr = new ProcessBuilder("chattr", "+i", dir.toString()).start().waitFor();
    if (Files.isWritable(dir)) {
      if (chattr == 0) {
        new ProcessBuilder("chattr", "-i", dir.toString()).start().waitFor();
      }
      Assumptions.abort("cannot make a directory read-only for this user here");
    }
    return chattr == 0;
  }

  private static List<Path> archives(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (var files = Files.list(dir)) {
      return files
          .filter(f -> f.getFileName().toString().matches("vmi-eviction-controller-.*\\.aot"))
          .sorted()
          .toList();
    }
  }

  /**
   * A test-only run with the JVM's class-loading log written to a file (JDK_JAVA_OPTIONS): true if
   * the jar's main class came from the ahead-of-time cache ("shared objects file").
   */
  private static boolean sharedFromArchive(Path dir, Map<String, String> env, String node)
      throws Exception {
    Path log = Files.createTempFile("plugin-class-load", ".log");
    try {
      Map<String, String> withLog = new java.util.HashMap<>(env);
      withLog.put("JDK_JAVA_OPTIONS", "-Xlog:class+load=info:file=" + log);
      Run r =
          kubectl(
              dir,
              withLog,
              "fastdrain",
              "uncordon",
              node,
              "--kubeconfig",
              fx.cluster.kubeconfig().toString());
      assertEquals(0, r.code, r.err);
      return Files.readAllLines(log).stream()
          .anyMatch(
              l ->
                  l.contains(" dev.capk.vmieviction.manager.Main ")
                      && l.contains("source: shared objects file"));
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
