package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.FreePorts;
import dev.capk.vmieviction.e2e.harness.ManagedProcess;
import dev.capk.vmieviction.e2e.harness.ProcessLogs;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A controller process as users run it: the built jar in its own JVM (or, for the benchmarks, a
 * peer's binary), with its flags and an infra kubeconfig. It can be killed (SIGKILL) and started
 * again with the same flags, as a crash and a restart would. Each start waits for /readyz and
 * measures what the benchmarks report: the time and CPU to /readyz, the peak RSS meanwhile; it
 * gives up early, with {@link NotReady}, when the process dies or its log shows an
 * OutOfMemoryError.
 */
public final class ControllerProcess implements AutoCloseable {
  /** The controller's flags for its probe and metrics addresses. */
  public static final String HEALTH_FLAG = "--health-probe-bind-address";

  public static final String METRICS_FLAG = "--metrics-bind-address";

  private final String name;
  private final List<String> command;
  private final List<String> flags;
  private final Path logDir;
  private final Map<String, String> env;

  /** Flags naming the probe and metrics addresses; null: the args bind them (a container's). */
  private final String healthFlag;

  private final String metricsFlag;
  private final Duration timeout;

  private ManagedProcess process;
  private int healthPort;
  private int metricsPort;
  private int starts;
  private long startNanos;
  private long readyNanos;
  private double readyCpuSeconds;
  private long peakRssKb;

  private ControllerProcess(
      String name,
      Path logDir,
      List<String> command,
      Map<String, String> env,
      String healthFlag,
      String metricsFlag,
      List<String> flags,
      Duration timeout) {
    this.name = name;
    this.logDir = logDir;
    this.command = List.copyOf(command);
    this.env = Map.copyOf(env);
    this.healthFlag = healthFlag;
    this.metricsFlag = metricsFlag;
    this.flags = List.copyOf(flags);
    this.timeout = timeout;
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

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /**
   * Starts the controller with {@code flags} (besides the health and metrics addresses) and waits
   * for /readyz.
   */
  public static ControllerProcess start(String name, Path logDir, List<String> flags) {
    List<String> jvm = List.of(java(), "-Xmx512m", "-XX:+UseSerialGC", "-jar", jar().toString());
    return launch(
        "controller-" + name,
        logDir,
        jvm,
        Map.of(),
        HEALTH_FLAG,
        METRICS_FLAG,
        flags,
        Duration.ofSeconds(60));
  }

  /**
   * Starts the jar as the image runs it for a Deployment's container: {@code java -jar} (the
   * image's ENTRYPOINT), then exactly the container's {@code args}, with its {@code env}; no JVM
   * option or address of the test's. The probes and metrics are read where the args bind them.
   */
  public static ControllerProcess startAsContainer(
      String name, Path logDir, List<String> args, Map<String, String> env) {
    List<String> command = List.of(java(), "-jar", jar().toString());
    return start(
        new ControllerProcess(
            "controller-" + name, logDir, command, env, null, null, args, Duration.ofSeconds(60)));
  }

  /**
   * Starts {@code command} (e.g. a java, its flags, {@code -jar} and a jar), then loopback health
   * and metrics addresses given with {@code healthFlag} and {@code metricsFlag} (the controller's
   * are {@link #HEALTH_FLAG} and {@link #METRICS_FLAG}), then {@code flags}, with {@code env}, and
   * waits up to {@code timeout}. {@code name} names the process and its log, {@code <name>.log} in
   * {@code logDir}.
   */
  public static ControllerProcess launch(
      String name,
      Path logDir,
      List<String> command,
      Map<String, String> env,
      String healthFlag,
      String metricsFlag,
      List<String> flags,
      Duration timeout) {
    return start(
        new ControllerProcess(name, logDir, command, env, healthFlag, metricsFlag, flags, timeout));
  }

  private static ControllerProcess start(ControllerProcess p) {
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
      throw new IllegalStateException(name + " is already running (PID " + process.pid() + ")");
    }
    starts++;
    for (int attempt = 1; ; attempt++) {
      List<String> full = new ArrayList<>(command);
      if (healthFlag == null) {
        healthPort = portOf(HEALTH_FLAG);
        metricsPort = portOf(METRICS_FLAG);
      } else {
        healthPort = FreePorts.next();
        metricsPort = FreePorts.next();
        full.add(healthFlag + "=127.0.0.1:" + healthPort);
        full.add(metricsFlag + "=127.0.0.1:" + metricsPort);
      }
      full.addAll(flags);
      Path log = logDir.resolve(name + ".log");
      long logBefore = log.toFile().length();
      startNanos = System.nanoTime();
      process = ManagedProcess.start(name, full, log, env);
      try {
        awaitReady();
        return;
      } catch (NotReady e) {
        // A port chosen here was taken by another process before the controller bound it (FreePorts
        // checks, then lets go): choose others, a few times. Any other failure is the test's.
        if (healthFlag == null
            || attempt == PORT_ATTEMPTS
            || !ProcessLogs.contains(
                log, logBefore, "java.net.BindException: Address already in use")) {
          throw e;
        }
      }
    }
  }

  private static final int PORT_ATTEMPTS = 3;

  /** Polls /readyz every 10 ms, tracking the peak RSS; gives up as {@link NotReady} says. */
  private void awaitReady() {
    long deadline = startNanos + timeout.toNanos();
    long oomSeen = -1;
    peakRssKb = 0;
    for (int i = 0; System.nanoTime() < deadline; i++) {
      if (!process.isAlive()) {
        throw new NotReady(process.describe("exited during start-up"), peakRssKb, false, waited());
      }
      if (httpStatus(healthPort, "/readyz") == 200) {
        readyNanos = System.nanoTime();
        readyCpuSeconds = processCpuSeconds(pid());
        peakRssKb = Math.max(peakRssKb, rssKb());
        return;
      }
      if (i % 10 == 0) {
        peakRssKb = Math.max(peakRssKb, rssKb());
      }
      if (i % 100 == 0 && oomSeen < 0 && ProcessLogs.contains(log(), "OutOfMemoryError")) {
        oomSeen = System.nanoTime();
      }
      if (oomSeen > 0 && System.nanoTime() - oomSeen > 10_000_000_000L) {
        break; // out of memory and still not ready 10 s later: it will not get there
      }
      sleep(10);
    }
    double waited = waited();
    boolean oom = ProcessLogs.contains(log(), "OutOfMemoryError");
    close();
    throw new NotReady(
        process.describe(
            String.format(
                "not ready after %.0f s%s", waited, oom ? " (OutOfMemoryError in its log)" : "")),
        peakRssKb,
        oom,
        waited);
  }

  private double waited() {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  /** The process never answered /readyz 200: how long we waited, its peak RSS, whether OOM. */
  public static final class NotReady extends IllegalStateException {
    public final long peakRssKb;
    public final boolean outOfMemory;
    public final double waitedSeconds;

    NotReady(String message, long peakRssKb, boolean outOfMemory, double waitedSeconds) {
      super(message);
      this.peakRssKb = peakRssKb;
      this.outOfMemory = outOfMemory;
      this.waitedSeconds = waitedSeconds;
    }
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

  /** Milliseconds from the last start to its first /readyz 200. */
  public double startupMs() {
    return (readyNanos - startNanos) / 1e6;
  }

  /**
   * CPU seconds (user + system, all threads) used until /readyz answered 200: what start-up costs,
   * less disturbed than its wall time by other load on the machine.
   */
  public double startupCpuSeconds() {
    return readyCpuSeconds;
  }

  /** Highest RSS seen while waiting for /readyz. */
  public long peakRssKb() {
    return peakRssKb;
  }

  public long rssKb() {
    return rssKb(pid());
  }

  /** The Prometheus text the controller serves at /metrics. */
  public String metrics() throws IOException {
    HttpURLConnection c =
        (HttpURLConnection)
            URI.create("http://127.0.0.1:" + metricsPort + "/metrics").toURL().openConnection();
    try (var in = c.getInputStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } finally {
      c.disconnect();
    }
  }

  /** Heap in use, in KiB: the JVM's own metrics if /metrics exports them, else jcmd. */
  public HeapReading heapUsedKb() {
    try {
      Matcher jvm =
          Pattern.compile(
                  "(?m)^jvm_memory_(?:bytes_)?used(?:_bytes)?\\{area=\"heap\"[^}]*} ([0-9.eE+]+)")
              .matcher(metrics());
      if (jvm.find()) {
        long kb = (long) (Double.parseDouble(jvm.group(1)) / 1024);
        return new HeapReading(kb, "/metrics jvm_memory_used{area=heap}");
      }
    } catch (IOException | RuntimeException ignored) {
      // fall back to jcmd
    }
    return new HeapReading(jcmdHeapUsedKb(), "jcmd GC.heap_info");
  }

  public record HeapReading(long kb, String source) {}

  /** Sum of "used" over the generations jcmd GC.heap_info prints (Metaspace excluded). */
  private long jcmdHeapUsedKb() {
    long used = 0;
    Matcher m =
        Pattern.compile(
                "(?m)^\\s*(?!Metaspace|class space)[A-Za-z][\\w -]*?\\s+total \\d+K, used (\\d+)K")
            .matcher(jcmd("GC.heap_info"));
    while (m.find()) {
      used += Long.parseLong(m.group(1));
    }
    return used;
  }

  /** A full collection (jcmd GC.run), then the heap still in use: the live set. */
  public long liveHeapKb() {
    jcmd("GC.run");
    return jcmdHeapUsedKb();
  }

  private String jcmd(String what) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      Process p =
          new ProcessBuilder(jcmd.toString(), Long.toString(pid()), what)
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

  /** The HTTP status of a GET of {@code path} on loopback port {@code port}; -1 if no answer. */
  private static int httpStatus(int port, String path) {
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

  /** VmRSS of a process in KiB, from /proc/PID/status; -1 if unknown. */
  public static long rssKb(long pid) {
    return procStatus(pid, "VmRSS:");
  }

  /**
   * A number of /proc/PID/status ({@code Threads:}; {@code VmRSS:} or {@code VmHWM:}, the peak RSS,
   * in KiB); -1 if unknown.
   */
  public static long procStatus(long pid, String key) {
    try {
      return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream()
          .filter(l -> l.startsWith(key))
          .findFirst()
          .map(l -> Long.parseLong(l.replaceAll("[^0-9]", "")))
          .orElse(-1L);
    } catch (IOException e) {
      return -1;
    }
  }

  /** CPU seconds (user + system) a process has used so far, from /proc/PID/stat; -1 if unknown. */
  public static double processCpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      // After the command name (which may hold spaces): utime is field 14, stime 15, in USER_HZ.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  public static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
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
