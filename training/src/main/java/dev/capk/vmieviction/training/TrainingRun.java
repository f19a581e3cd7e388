package dev.capk.vmieviction.training;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The training run of the controller's ahead-of-time cache (JDK 25, JEP 483 and 515): starts the
 * controller's jar with {@code -XX:AOTCacheOutput} against a {@link ReplayHandler} of the recorded
 * evacuation on loopback, waits until the controller has made every write of the recording again,
 * reads its /readyz and /metrics as a kubelet and Prometheus would, and stops it with SIGTERM, on
 * which the JVM writes the cache. No cluster is needed: an image build runs it.
 *
 * <p>{@code java -jar vmi-eviction-training.jar --jar=CONTROLLER.jar --cache=OUT.aot [--java=JAVA]
 * [--recording=FILE] [--timeout=SECONDS] [--log=FILE] [-- JVM flags of the controller]}. It exits 0
 * with the cache written, 1 otherwise, saying why (a training that did not replay the evacuation
 * would make a cache of a start-up alone).
 */
public final class TrainingRun {
  private TrainingRun() {}

  public static void main(String[] args) throws Exception {
    try {
      System.out.println(run(Options.parse(args)));
    } catch (TrainingFailed e) {
      System.err.println("training: " + e.getMessage());
      System.exit(1);
    }
  }

  static final class TrainingFailed extends Exception {
    TrainingFailed(String message) {
      super(message);
    }
  }

  record Options(
      Path jar,
      Path cache,
      String java,
      Path recording,
      Duration timeout,
      Path log,
      List<String> jvm) {
    static Options parse(String[] args) throws TrainingFailed {
      Path jar = null;
      Path cache = null;
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      Path recording = null;
      Duration timeout = Duration.ofSeconds(120);
      Path log = null;
      List<String> jvm = new ArrayList<>();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        String value = a.contains("=") ? a.substring(a.indexOf('=') + 1) : "";
        if (a.equals("--")) {
          jvm.addAll(Arrays.asList(args).subList(i + 1, args.length));
          break;
        } else if (a.startsWith("--jar=")) {
          jar = Path.of(value);
        } else if (a.startsWith("--cache=")) {
          cache = Path.of(value);
        } else if (a.startsWith("--java=")) {
          java = value;
        } else if (a.startsWith("--recording=")) {
          recording = Path.of(value);
        } else if (a.startsWith("--timeout=")) {
          timeout = Duration.ofSeconds(Long.parseLong(value));
        } else if (a.startsWith("--log=")) {
          log = Path.of(value);
        } else {
          throw new TrainingFailed("unknown argument " + a);
        }
      }
      if (jar == null || !Files.isRegularFile(jar) || cache == null) {
        throw new TrainingFailed("--jar=CONTROLLER.jar (an existing file) and --cache=OUT.aot");
      }
      return new Options(jar, cache, java, recording, timeout, log, List.copyOf(jvm));
    }
  }

  static String run(Options o) throws Exception {
    Recording recording = load(o.recording());
    Path work = Files.createTempDirectory("aot-training");
    Path log = o.log() != null ? o.log() : work.resolve("controller.log");
    Files.deleteIfExists(o.cache());
    long started = System.nanoTime();
    ReplayHandler replay;
    LoopbackServer[] server = new LoopbackServer[1];
    replay = new ReplayHandler(recording, secret -> server[0].kubeconfig("guest:" + secret));
    server[0] = new LoopbackServer(replay);
    try (LoopbackServer s = server[0]) {
      Path kubeconfig = work.resolve("infra.kubeconfig");
      Files.writeString(kubeconfig, s.kubeconfig(Recording.INFRA));
      int health = freePort();
      int metrics = freePort();
      List<String> command = new ArrayList<>(List.of(o.java()));
      command.addAll(o.jvm());
      command.add("-XX:AOTCacheOutput=" + o.cache().toAbsolutePath());
      command.addAll(List.of("-jar", o.jar().toAbsolutePath().toString()));
      command.add("--kubeconfig=" + kubeconfig);
      command.addAll(recording.header.controllerFlags());
      command.add("--health-probe-bind-address=127.0.0.1:" + health);
      command.add("--metrics-bind-address=127.0.0.1:" + metrics);
      Process controller =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      try {
        boolean replayed = awaitWrites(replay, controller, o.timeout());
        scrape(health, "/readyz");
        scrape(metrics, "/metrics");
        if (!replayed) {
          throw new TrainingFailed(
              (controller.isAlive()
                      ? "the controller did not make the recorded writes within "
                          + o.timeout().toSeconds()
                          + " s"
                      : "the controller exited ("
                          + controller.exitValue()
                          + ") before making the recorded writes")
                  + ": missing "
                  + replay.writesMissing()
                  + "; requests not in the recording: "
                  + replay.notRecorded()
                  + "; the end of its log ("
                  + log
                  + "):\n"
                  + tail(log));
        }
        // The steps after the last write (its Events, the next reconcile) are trained too.
        Thread.sleep(1000);
      } finally {
        controller.destroy();
      }
      if (!controller.waitFor(o.timeout().toSeconds(), TimeUnit.SECONDS)) {
        controller.destroyForcibly();
        throw new TrainingFailed("the controller did not exit after SIGTERM; its log: " + log);
      }
    }
    if (!Files.isRegularFile(o.cache()) || Files.size(o.cache()) == 0) {
      throw new TrainingFailed(
          "no cache written at " + o.cache() + "; the end of the controller's log:\n" + tail(log));
    }
    // Trained: nothing of the run is left behind (an image build would keep it in its layer).
    try (var files = Files.walk(work)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
    return String.format(
        "training: %s (%d MiB) from a replayed evacuation: %d requests, %d of them not in the"
            + " recording, %.1f s",
        o.cache(),
        Files.size(o.cache()) >> 20,
        replay.requests(),
        replay.notRecorded().size(),
        (System.nanoTime() - started) / 1e9);
  }

  /** Until the writes are made again, the time is up or the controller has exited. */
  private static boolean awaitWrites(ReplayHandler replay, Process controller, Duration timeout)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (controller.isAlive()) {
      long left = end - System.nanoTime();
      if (replay.awaitWrites(Duration.ofNanos(Math.min(left, Duration.ofSeconds(1).toNanos())))) {
        return true;
      }
      if (left <= 0) {
        return false;
      }
    }
    return replay.writesMissing().isEmpty();
  }

  /** The last lines of the controller's log (it holds no secret: the controller logs none). */
  private static String tail(Path log) throws IOException {
    if (!Files.isRegularFile(log)) {
      return "(no log)";
    }
    List<String> lines = Files.readAllLines(log);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }

  private static Recording load(Path file) throws IOException, TrainingFailed {
    if (file != null) {
      try (InputStream in = Files.newInputStream(file)) {
        return Recording.read(in);
      }
    }
    try (InputStream in = TrainingRun.class.getResourceAsStream("/" + Recording.RESOURCE)) {
      if (in == null) {
        throw new TrainingFailed("the jar holds no " + Recording.RESOURCE);
      }
      return Recording.read(in);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** One GET of the controller's own endpoint; its answer does not matter, only its code path. */
  private static void scrape(int port, String path) {
    try (HttpClient client = HttpClient.newHttpClient()) {
      client.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
              .timeout(Duration.ofSeconds(5))
              .build(),
          HttpResponse.BodyHandlers.discarding());
    } catch (IOException | InterruptedException e) {
      // not up (yet): the training goes on without it
    }
  }
}
