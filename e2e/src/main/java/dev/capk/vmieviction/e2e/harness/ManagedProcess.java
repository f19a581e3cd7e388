package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One local process the harness started: its output goes to a log file, and it is stopped by its
 * own PID only. Every live one is registered, so a JVM shutdown hook can stop what the harness
 * started and nothing else.
 */
public final class ManagedProcess implements AutoCloseable {
  private static final Set<ManagedProcess> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(new Thread(ManagedProcess::stopAll, "harness-process-reaper"));
  }

  private final String component;
  private final List<String> command;
  private final Path log;
  private final Process process;

  private ManagedProcess(String component, List<String> command, Path log, Process process) {
    this.component = component;
    this.command = List.copyOf(command);
    this.log = log;
    this.process = process;
  }

  /** Starts {@code command}, appending its stdout and stderr to {@code log}. */
  public static ManagedProcess start(
      String component, List<String> command, Path log, Map<String, String> env) {
    try {
      Files.createDirectories(log.getParent());
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
      builder.environment().putAll(env);
      ManagedProcess started = new ManagedProcess(component, command, log, builder.start());
      LIVE.add(started);
      PidLedger.record(started.pid(), component, command.get(0));
      return started;
    } catch (IOException e) {
      throw new IllegalStateException(
          component + " could not start (" + String.join(" ", command) + "): " + e.getMessage(), e);
    }
  }

  public String component() {
    return component;
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return log;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The exit code of a process that has ended. */
  public int exitValue() {
    return process.exitValue();
  }

  /** Asks the process to stop (SIGTERM) and returns at once; {@link #stop} then waits for it. */
  public void askToStop() {
    if (process.isAlive() && !asked) {
      asked = true;
      process.destroy();
    }
  }

  /** SIGTERM sent already: a second one makes kube-apiserver exit at once, not gracefully. */
  private volatile boolean asked;

  /**
   * Stops gracefully (SIGTERM), then forcibly after {@code grace}; waits until the process is gone.
   */
  public void stop(Duration grace) {
    try {
      if (process.isAlive()) {
        askToStop();
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly();
          process.waitFor(30, TimeUnit.SECONDS);
        }
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    } finally {
      LIVE.remove(this);
    }
  }

  /** SIGKILL, as a crash would; waits until the process is gone. */
  public void kill() {
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LIVE.remove(this);
  }

  @Override
  public void close() {
    stop(Duration.ofSeconds(10));
  }

  /**
   * Names the component, the command and the last lines of its log: what a failed start needs to
   * say.
   */
  public String describe(String problem) {
    String state = process.isAlive() ? "still running" : "exited with code " + process.exitValue();
    return component
        + " "
        + problem
        + " ("
        + state
        + ")\n  command: "
        + String.join(" ", command)
        + "\n  log: "
        + log
        + "\n  last lines of the log:\n"
        + ProcessLogs.tail(log, 25).indent(4);
  }

  private static void stopAll() {
    for (ManagedProcess p : List.copyOf(LIVE)) {
      p.stop(Duration.ofSeconds(5));
    }
  }
}
