package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Which controller jar the benchmarks run: this tree's build, or another build named by {@code
 * -Dcapk.bench.controllerJar=/path/to.jar} (e.g. the commit before a change, built in its own
 * worktree), so the same benchmark measures both. The report names the jar and, when the jar lies
 * in a git work tree, that tree's commit.
 */
final class ControllerJar {
  static final String PROPERTY = "capk.bench.controllerJar";

  private ControllerJar() {}

  static Path path() {
    String configured = System.getProperty(PROPERTY);
    if (configured == null || configured.isBlank()) {
      return ControllerProcess.jar();
    }
    Path jar = Path.of(configured).toAbsolutePath().normalize();
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("-D" + PROPERTY + " names no file: " + jar);
    }
    return jar;
  }

  /** Starts the jar with the Deployment's JVM and {@code flags}; see {@link #start}. */
  static ControllerProcess start(String name, Path logDir, List<String> flags, Duration timeout) {
    return start(name, logDir, DeploymentJvm.ENV, DeploymentJvm.JVM, flags, timeout);
  }

  /**
   * Starts the jar with {@code env} and the JVM flags {@code jvm}, on {@link
   * DeploymentJvm#javaCommand}, and waits until /readyz answers 200 (see {@link ControllerProcess}:
   * start-up time and CPU, peak RSS, {@link ControllerProcess.NotReady}); its log holds this run
   * only.
   */
  static ControllerProcess start(
      String name,
      Path logDir,
      Map<String, String> env,
      List<String> jvm,
      List<String> flags,
      Duration timeout) {
    List<String> command = new ArrayList<>(List.of(DeploymentJvm.javaCommand()));
    command.addAll(jvm);
    command.addAll(List.of("-jar", path().toString()));
    try {
      Files.deleteIfExists(logDir.resolve("controller-" + name + ".log"));
    } catch (IOException ignored) {
      // appended to instead
    }
    return ControllerProcess.launch(
        "controller-" + name,
        logDir,
        command,
        env,
        ControllerProcess.HEALTH_FLAG,
        ControllerProcess.METRICS_FLAG,
        flags,
        timeout);
  }

  /** "`/path/to.jar` (commit abc1234, modified files: no)", for the report. */
  static String describe() {
    Path jar = path();
    String source = System.getProperty(PROPERTY) == null ? "this tree's build" : "-D" + PROPERTY;
    return Report.f("`%s` (%s%s)", jar, source, commitOf(jar));
  }

  /** The commit the jar's work tree is at (or the jar's file name), for a table cell. */
  static String shortName() {
    Path jar = path();
    String head = git(jar.getParent(), "rev-parse", "--short", "HEAD");
    return head == null ? jar.getFileName().toString() : "commit " + head;
  }

  /**
   * The commit of the git work tree holding {@code jar} (the jar is built from it, but may be older
   * than the tree's latest edits: the report says whether the tree had uncommitted changes).
   */
  private static String commitOf(Path jar) {
    String head = git(jar.getParent(), "rev-parse", "--short", "HEAD");
    if (head == null) {
      return "; not in a git work tree";
    }
    String subject = git(jar.getParent(), "log", "-1", "--format=%s");
    String dirty = git(jar.getParent(), "status", "--porcelain", "--untracked-files=no");
    return Report.f(
        "; its work tree at commit %s \"%s\"%s",
        head,
        subject == null ? "" : subject,
        dirty == null || dirty.isEmpty() ? "" : ", with uncommitted changes");
  }

  private static String git(Path dir, String... args) {
    String[] command = new String[args.length + 3];
    command[0] = "git";
    command[1] = "-C";
    command[2] = dir.toString();
    System.arraycopy(args, 0, command, 3, args.length);
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
        return null;
      }
      return out;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
