package dev.capk.vmieviction.e2e.integration.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller's ahead-of-time cache as the image makes it (config/manager/Dockerfile): the
 * training jar replays the recorded evacuation to this build's controller jar on loopback, no
 * cluster. The controller must make every write of the recording again (so the recording still fits
 * the controller: when it fails here, record again with {@code make aot-recording}), and the JVM
 * must accept the cache it leaves.
 */
class AotTrainingIT {
  private static final Path TRAINING =
      RepoPaths.root().resolve("training/target/vmi-eviction-training.jar");

  /** The Deployment's JVM flags but the cache's (ImageDefinitionTest holds the two together). */
  private static final List<String> DEPLOYMENT_JVM =
      List.of(
          "-XX:+UseSerialGC",
          "-XX:MaxRAMPercentage=45",
          "-XX:MinHeapFreeRatio=10",
          "-XX:MaxHeapFreeRatio=20",
          "-XX:TieredStopAtLevel=1",
          "-Xss512k",
          "-XX:ReservedCodeCacheSize=32m");

  @Test
  void theRecordedEvacuationReplaysInFullAndTheJvmTakesTheCache(@TempDir Path dir)
      throws Exception {
    Path cache = dir.resolve("controller.aot");
    Path log = dir.resolve("controller.log");
    List<String> command =
        new ArrayList<>(
            List.of(
                java(),
                "-jar",
                TRAINING.toString(),
                "--jar=" + ControllerProcess.jar(),
                "--cache=" + cache,
                "--log=" + log,
                "--"));
    command.addAll(DEPLOYMENT_JVM);
    Run training = run(command, dir.resolve("training.out"));
    assertEquals(0, training.code, training.output + controllerLog(log));
    assertTrue(
        training.output.contains(", 0 of them not in the recording"),
        "every request the controller made is in the recording: " + training.output);
    String controller = controllerLog(log);
    assertEquals(2, count(controller, "VMI deleted so that KubeVirt recreates it"), controller);
    assertEquals(2, count(controller, "guest node uncordoned"), controller);
    assertTrue(!controller.contains(" WARN ") && !controller.contains(" ERROR "), controller);

    // -XX:AOTMode=on refuses to start without the cache: the check can fail.
    Run uses = run(withCache(cache), dir.resolve("uses.out"));
    assertEquals(0, uses.code, uses.output);
    Path broken = Files.writeString(dir.resolve("broken.aot"), "not a cache");
    Run refuses = run(withCache(broken), dir.resolve("refuses.out"));
    assertNotEquals(0, refuses.code, refuses.output);
  }

  /**
   * The cache leaves out class files older than Java 6 ("Old class has been linked" in -Xlog:aot):
   * the build rewrites picocli's (controllers/src/build/RewriteOldClassFiles.java), which every
   * start would otherwise load and verify from the jar.
   */
  @Test
  void everyClassFileOfTheJarIsNewEnoughForTheCache() throws IOException {
    List<String> old = new ArrayList<>();
    try (ZipFile jar = new ZipFile(ControllerProcess.jar().toFile())) {
      for (ZipEntry e : Collections.list(jar.entries())) {
        if (e.getName().endsWith(".class")) {
          try (DataInputStream in = new DataInputStream(jar.getInputStream(e))) {
            in.readInt(); // magic
            in.readUnsignedShort(); // minor version
            if (in.readUnsignedShort() < 50) {
              old.add(e.getName());
            }
          }
        }
      }
    }
    assertEquals(List.of(), old, old.size() + " class files older than major version 50");
  }

  private static List<String> withCache(Path cache) {
    List<String> command = new ArrayList<>(List.of(java()));
    command.addAll(DEPLOYMENT_JVM);
    command.addAll(
        List.of(
            "-XX:AOTMode=on",
            "-XX:AOTCache=" + cache,
            "-jar",
            ControllerProcess.jar().toString(),
            "--version"));
    return command;
  }

  private record Run(int code, String output) {}

  private static Run run(List<String> command, Path out) throws Exception {
    Process p =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new AssertionError("did not end within 5 minutes: " + command);
    }
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
  }

  private static String controllerLog(Path log) throws IOException {
    return Files.isRegularFile(log) ? Files.readString(log) : "(no controller log)";
  }

  private static int count(String text, String what) {
    return text.split(java.util.regex.Pattern.quote(what), -1).length - 1;
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
