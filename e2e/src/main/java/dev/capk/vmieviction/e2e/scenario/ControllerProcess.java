package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.FreePorts;
import dev.capk.vmieviction.e2e.harness.ManagedProcess;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The controller as users run it: the built jar in its own JVM, with its flags and an infra
 * kubeconfig. It can be killed (SIGKILL) and started again with the same flags, as a crash and a
 * restart would.
 */
public final class ControllerProcess implements AutoCloseable {
  private final String name;
  private final List<String> flags;
  private final Path logDir;

  /** Null: the test's JVM settings and addresses; else the env of a Deployment's container. */
  private final Map<String, String> containerEnv;

  private ManagedProcess process;
  private int healthPort;
  private int metricsPort;
  private int starts;

  private ControllerProcess(
      String name, List<String> flags, Path logDir, Map<String, String> containerEnv) {
    this.name = name;
    this.flags = List.copyOf(flags);
    this.logDir = logDir;
    this.containerEnv = containerEnv == null ? null : Map.copyOf(containerEnv);
  }

  /** The runnable jar `mvn package` builds. */
  public static Path jar() {
    Path jar = RepoPaths.root().resolve("controllers/target/vmi-eviction-controller.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          "no controller jar at " + jar + ": run `mvn -B package -DskipTests -pl controllers -am`");
    }
    return jar;
  }

  /**
   * Starts the controller with {@code flags} (besides the health and metrics addresses) and waits
   * for /readyz.
   */
  public static ControllerProcess start(String name, Path logDir, List<String> flags) {
    ControllerProcess p = new ControllerProcess(name, flags, logDir, null);
    p.startAgain();
    return p;
  }

  /**
   * Starts the jar as the image runs it for a Deployment's container: {@code java -jar} (the
   * image's ENTRYPOINT), then exactly the container's {@code args}, with its {@code env}; no JVM
   * option or address of the test's. The probes and metrics are read where the args bind them.
   */
  public static ControllerProcess startAsContainer(
      String name, Path logDir, List<String> args, Map<String, String> env) {
    ControllerProcess p = new ControllerProcess(name, args, logDir, env);
    p.startAgain();
    return p;
  }

  /** The port of {@code --flag=[host]:port} among the container's args. */
  private int portOf(String flag) {
    for (String f : flags) {
      if (f.startsWith(flag + "=")) {
        return Integer.parseInt(f.substring(f.lastIndexOf(':') + 1));
      }
    }
    throw new IllegalStateException("the container's args have no " + flag + ": " + flags);
  }

  public void startAgain() {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException(
          "controller " + name + " is already running (PID " + process.pid() + ")");
    }
    starts++;
    List<String> command;
    if (containerEnv != null) {
      healthPort = portOf("--health-probe-bind-address");
      metricsPort = portOf("--metrics-bind-address");
      command =
          new ArrayList<>(
              List.of(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-jar",
                  jar().toString()));
    } else {
      healthPort = FreePorts.next();
      metricsPort = FreePorts.next();
      command =
          new ArrayList<>(
              List.of(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xmx512m",
                  "-XX:+UseSerialGC",
                  "-jar",
                  jar().toString(),
                  "--health-probe-bind-address=127.0.0.1:" + healthPort,
                  "--metrics-bind-address=127.0.0.1:" + metricsPort));
    }
    command.addAll(flags);
    process =
        ManagedProcess.start(
            "controller-" + name,
            command,
            logDir.resolve("controller-" + name + ".log"),
            containerEnv == null ? Map.of() : containerEnv);
    Await.until(
        "controller " + name + " /readyz",
        Duration.ofSeconds(60),
        () -> {
          if (!process.isAlive()) {
            throw new IllegalStateException(process.describe("exited during start-up"));
          }
          return httpStatus("/readyz") == 200;
        });
  }

  /** SIGKILL: no shutdown hook, no cleanup, as a node crash or an OOM kill. */
  public void kill() {
    process.kill();
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return process.log();
  }

  public int starts() {
    return starts;
  }

  /** The Prometheus text the controller serves at /metrics. */
  public String metrics() throws IOException {
    HttpURLConnection c =
        (HttpURLConnection)
            URI.create("http://127.0.0.1:" + metricsPort + "/metrics").toURL().openConnection();
    try (var in = c.getInputStream()) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    } finally {
      c.disconnect();
    }
  }

  private int httpStatus(String path) {
    try {
      HttpURLConnection c =
          (HttpURLConnection)
              URI.create("http://127.0.0.1:" + healthPort + path).toURL().openConnection();
      c.setConnectTimeout(1000);
      c.setReadTimeout(2000);
      try {
        return c.getResponseCode();
      } finally {
        c.disconnect();
      }
    } catch (IOException e) {
      return -1;
    }
  }

  /** Stops it as Kubernetes stops a pod (SIGTERM, SIGKILL after 10 s) and returns its exit code. */
  public int terminate() {
    process.stop(Duration.ofSeconds(10));
    return process.exitValue();
  }

  @Override
  public void close() {
    if (process != null) {
      process.stop(Duration.ofSeconds(10));
    }
  }
}
