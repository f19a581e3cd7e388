package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.FreePorts;
import dev.capk.vmieviction.e2e.harness.ManagedProcess;
import dev.capk.vmieviction.e2e.harness.ProcessLogs;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The controller jar in its own JVM, sized as the Deployment in config/manager runs it ({@link
 * DeploymentJvm}: its JAVA_TOOL_OPTIONS and environment, and {@code -XX:MaxRAM} set to the
 * container's memory limit so that this machine's JVM sizes its heap, and picks its collector where
 * the flags leave that open, as in the container). Measures the time from process start to /readyz
 * 200, the CPU time spent until then, RSS and heap.
 */
final class BenchController implements MeasuredController {
  /** The JVM flags the Deployment's container ends up with (see config/manager/manager.yaml). */
  static final List<String> JVM = DeploymentJvm.flags();

  /** The Deployment's container environment besides JAVA_TOOL_OPTIONS. */
  static final Map<String, String> ENV = DeploymentJvm.environment();

  /** The Deployment's JVM, environment first, for reports. */
  static String describeDeployed() {
    String java = System.getProperty(JAVA_HOME_PROPERTY) == null ? "" : "(" + javaCommand() + ") ";
    return java + describe(ENV, JVM);
  }

  static String describe(Map<String, String> env, List<String> jvm) {
    List<String> parts = new ArrayList<>();
    env.forEach((k, v) -> parts.add(k + "=" + v));
    parts.addAll(jvm);
    return String.join(" ", parts);
  }

  private final ManagedProcess process;
  private final int healthPort;
  private final int metricsPort;
  private final long startNanos;
  private long readyNanos = -1;

  private BenchController(
      ManagedProcess process, int healthPort, int metricsPort, long startNanos) {
    this.process = process;
    this.healthPort = healthPort;
    this.metricsPort = metricsPort;
    this.startNanos = startNanos;
  }

  /**
   * Starts the jar with {@code flags} and waits (polling every 10 ms) until /readyz answers 200.
   */
  static BenchController start(String name, Path logDir, List<String> flags, Duration timeout) {
    return start(name, logDir, ENV, JVM, flags, timeout);
  }

  /** As {@link #start(String, Path, Map, List, List, Duration)} without extra environment. */
  static BenchController start(
      String name, Path logDir, List<String> jvm, List<String> flags, Duration timeout) {
    return start(name, logDir, Map.of(), jvm, flags, timeout);
  }

  /**
   * As {@link #start(String, Path, List, Duration)} with other JVM flags. Gives up early, with
   * {@link NotReady}, when the process dies or its log shows an OutOfMemoryError; tracks the peak
   * RSS meanwhile.
   */
  static BenchController start(
      String name,
      Path logDir,
      Map<String, String> env,
      List<String> jvm,
      List<String> flags,
      Duration timeout) {
    int health = FreePorts.next();
    int metrics = FreePorts.next();
    List<String> command = new ArrayList<>();
    command.add(javaCommand());
    command.addAll(jvm);
    command.addAll(
        List.of(
            "-jar",
            ControllerJar.path().toString(),
            "--health-probe-bind-address=127.0.0.1:" + health,
            "--metrics-bind-address=127.0.0.1:" + metrics));
    command.addAll(flags);
    try {
      java.nio.file.Files.deleteIfExists(
          logDir.resolve("controller-" + name + ".log")); // one run's log, not every run's
    } catch (java.io.IOException ignored) {
      // appended to instead
    }
    long t0 = System.nanoTime();
    ManagedProcess p =
        ManagedProcess.start(
            "controller-" + name, command, logDir.resolve("controller-" + name + ".log"), env);
    BenchController c = new BenchController(p, health, metrics, t0);
    long deadline = t0 + timeout.toNanos();
    long peakRss = 0;
    long oomSeen = -1;
    for (int i = 0; System.nanoTime() < deadline; i++) {
      if (!p.isAlive()) {
        throw new NotReady(
            p.describe("exited during start-up"), peakRss, false, (System.nanoTime() - t0) / 1e9);
      }
      if (c.status("/readyz") == 200) {
        c.readyNanos = System.nanoTime();
        c.readyCpuSeconds = Machine.processCpuSeconds(p.pid());
        c.peakRssKb = Math.max(peakRss, c.rssKb());
        return c;
      }
      if (i % 10 == 0) {
        peakRss = Math.max(peakRss, c.rssKb());
      }
      if (i % 100 == 0 && oomSeen < 0 && ProcessLogs.contains(p.log(), "OutOfMemoryError")) {
        oomSeen = System.nanoTime();
      }
      if (oomSeen > 0 && System.nanoTime() - oomSeen > 10_000_000_000L) {
        break; // out of memory and still not ready 10 s later: it will not get there
      }
      sleep(10);
    }
    double waited = (System.nanoTime() - t0) / 1e9;
    boolean oom = ProcessLogs.contains(p.log(), "OutOfMemoryError");
    c.close();
    throw new NotReady(
        p.describe(
            Report.f(
                "not ready after %.0f s%s", waited, oom ? " (OutOfMemoryError in its log)" : "")),
        peakRss,
        oom,
        waited);
  }

  /**
   * The {@code java} that runs the controller: this JVM's, or the one of the JDK named by {@code
   * -Dcapk.bench.controllerJavaHome} (e.g. a newer JDK measured against the Deployment's).
   */
  static String javaCommand() {
    String home = System.getProperty(JAVA_HOME_PROPERTY, System.getProperty("java.home"));
    return Path.of(home, "bin", "java").toString();
  }

  static final String JAVA_HOME_PROPERTY = "capk.bench.controllerJavaHome";

  /**
   * The controller never answered /readyz 200: how long we waited, its peak RSS, whether it ran out
   * of heap.
   */
  static final class NotReady extends IllegalStateException {
    final long peakRssKb;
    final boolean outOfMemory;
    final double waitedSeconds;

    NotReady(String message, long peakRssKb, boolean outOfMemory, double waitedSeconds) {
      super(message);
      this.peakRssKb = peakRssKb;
      this.outOfMemory = outOfMemory;
      this.waitedSeconds = waitedSeconds;
    }
  }

  private long peakRssKb;

  /** Highest RSS seen while waiting for /readyz. */
  long peakRssKb() {
    return peakRssKb;
  }

  private double readyCpuSeconds = -1;

  /**
   * CPU seconds (user + system, all threads) the process used until /readyz answered 200: what
   * start-up costs, less disturbed than its wall time by other load on the machine.
   */
  double startupCpuSeconds() {
    return readyCpuSeconds;
  }

  /** Milliseconds from process start to the first /readyz 200. */
  double startupMs() {
    return (readyNanos - startNanos) / 1e6;
  }

  @Override
  public long pid() {
    return process.pid();
  }

  Path log() {
    return process.log();
  }

  long rssKb() {
    return Machine.rssKb(pid());
  }

  String metrics() throws IOException {
    HttpURLConnection c =
        (HttpURLConnection)
            URI.create("http://127.0.0.1:" + metricsPort + "/metrics").toURL().openConnection();
    try (var in = c.getInputStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } finally {
      c.disconnect();
    }
  }

  /**
   * Heap in use, in KiB: the JVM's own metrics if /metrics exports them, else jcmd GC.heap_info.
   */
  HeapReading heapUsedKb() {
    try {
      String m = metrics();
      Matcher jvm =
          Pattern.compile(
                  "(?m)^jvm_memory_(?:bytes_)?used(?:_bytes)?\\{area=\"heap\"[^}]*} ([0-9.eE+]+)")
              .matcher(m);
      if (jvm.find()) {
        return new HeapReading(
            (long) (Double.parseDouble(jvm.group(1)) / 1024),
            "/metrics jvm_memory_used{area=heap}");
      }
    } catch (IOException | RuntimeException ignored) {
      // fall back to jcmd
    }
    return new HeapReading(jcmdHeapUsedKb(), "jcmd GC.heap_info");
  }

  record HeapReading(long kb, String source) {}

  /** Sum of "used" over the generations jcmd GC.heap_info prints (Metaspace excluded). */
  long jcmdHeapUsedKb() {
    String out = jcmd("GC.heap_info");
    long used = 0;
    Matcher m =
        Pattern.compile(
                "(?m)^\\s*(?!Metaspace|class space)[A-Za-z][\\w -]*?\\s+total \\d+K, used (\\d+)K")
            .matcher(out);
    while (m.find()) {
      used += Long.parseLong(m.group(1));
    }
    return used;
  }

  /** A full collection (jcmd GC.run), then the heap still in use: the live set. */
  long liveHeapKb() {
    jcmd("GC.run");
    return jcmdHeapUsedKb();
  }

  private String jcmd(String command) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      Process p =
          new ProcessBuilder(jcmd.toString(), Long.toString(pid()), command)
              .redirectErrorStream(true)
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(30, TimeUnit.SECONDS);
      return out;
    } catch (IOException e) {
      throw new IllegalStateException("cannot run jcmd: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  int status(String path) {
    return httpStatus(healthPort, path);
  }

  /** The HTTP status of a GET of {@code path} on loopback port {@code port}; -1 if no answer. */
  static int httpStatus(int port, String path) {
    try {
      HttpURLConnection c =
          (HttpURLConnection)
              URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
      c.setConnectTimeout(500);
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

  @Override
  public void close() {
    process.stop(Duration.ofSeconds(10));
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
