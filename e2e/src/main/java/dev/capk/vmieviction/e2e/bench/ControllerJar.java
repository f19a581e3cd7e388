package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.FreePorts;
import dev.capk.vmieviction.e2e.harness.Pki;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.yaml.snakeyaml.Yaml;

/**
 * The controllers the benchmarks run. Ours: this tree's jar, or another build named by {@code
 * -Dcapk.bench.controllerJar} (the report names it and its work tree's commit), on the JVM exactly
 * as config/manager/manager.yaml runs it: the container's environment and {@code
 * JAVA_TOOL_OPTIONS}, plus {@code -XX:MaxRAM} = its memory limit (on this machine the JVM would
 * size itself from the whole machine), the image's ahead-of-time cache replaced by one trained next
 * to the jar as the image trains its own ({@link #aotCache}), then {@code
 * -Dcapk.bench.extraJvmFlags}; on the JDK of {@code -Dcapk.bench.controllerJavaHome} if given
 * (before JDK 25, which has no such cache: the class-data archive its build put next to the jar, if
 * any). The Go peer: CAPK's original manager, a binary built outside this repository named by
 * {@code -Dcapk.bench.goController}.
 */
final class ControllerJar {
  static final String PROPERTY = "capk.bench.controllerJar";
  static final String GO_PROPERTY = "capk.bench.goController";
  static final String JAVA_HOME_PROPERTY = "capk.bench.controllerJavaHome";

  /** The Deployment's container environment besides JAVA_TOOL_OPTIONS. */
  static final Map<String, String> ENV = new LinkedHashMap<>();

  /** The JVM flags the Deployment's container ends up with. */
  static final List<String> JVM = new ArrayList<>();

  private ControllerJar() {}

  /** The file {@code -Dproperty} names (failing unless {@code ok}), or null when not given. */
  private static Path configured(String property, Predicate<Path> ok) {
    String value = System.getProperty(property, "");
    Path file = value.isBlank() ? null : Path.of(value).toAbsolutePath().normalize();
    if (file != null && !ok.test(file)) {
      throw new IllegalStateException("-D" + property + " names no usable file: " + file);
    }
    return file;
  }

  static Path path() {
    Path jar = configured(PROPERTY, Files::isRegularFile);
    return jar == null ? ControllerProcess.jar() : jar;
  }

  /** The Go peer's binary, or null when it is not to be measured. */
  static Path goBinary() {
    return configured(GO_PROPERTY, Files::isExecutable);
  }

  static ControllerProcess start(String name, Path logDir, List<String> flags, Duration timeout)
      throws IOException {
    return start(name, logDir, ENV, JVM, flags, timeout);
  }

  /**
   * Starts the jar with {@code env} and JVM flags {@code jvm} and waits until /readyz answers 200
   * (see {@link ControllerProcess}).
   */
  static ControllerProcess start(
      String name,
      Path logDir,
      Map<String, String> env,
      List<String> jvm,
      List<String> flags,
      Duration timeout)
      throws IOException {
    List<String> command = new ArrayList<>(List.of(javaCommand()));
    for (String flag : jvm) {
      if (flag.startsWith(AOT_CACHE)) {
        command.addAll(archiveFlags(jvm));
      } else {
        command.add(flag);
      }
    }
    command.addAll(List.of("-jar", path().toString()));
    return ControllerProcess.launch(
        fresh(logDir, "controller-" + name),
        logDir,
        command,
        env,
        ControllerProcess.HEALTH_FLAG,
        ControllerProcess.METRICS_FLAG,
        flags,
        timeout);
  }

  /**
   * Starts the Go manager with {@code --concurrency=workers} and waits for its /readyz. Every
   * listener is bound to loopback: health and metrics by flag, the webhook server (which it starts
   * for KubevirtMachineTemplate and which needs a certificate) with a throw-away one.
   */
  static ControllerProcess startGo(
      String name, Path binary, Path logDir, Path kubeconfig, int workers) throws IOException {
    Path certs = Files.createDirectories(logDir.resolve("go-webhook-certs"));
    Pki.Issued cert = Pki.newAuthority("bench-go-webhook-ca").serving("localhost", List.of());
    Pki.write(certs.resolve("tls.crt"), cert.certificatePem());
    Pki.write(certs.resolve("tls.key"), cert.privateKeyPem());
    List<String> flags =
        List.of(
            "--kubeconfig=" + kubeconfig,
            "--concurrency=" + workers,
            "--leader-elect=false",
            "--webhook-port=" + FreePorts.next(),
            "--webhook-cert-dir=" + certs);
    return ControllerProcess.launch(
        fresh(logDir, "go-controller-" + name),
        logDir,
        List.of(binary.toString()),
        Map.of(),
        "--health-addr",
        "--metrics-bind-addr",
        flags,
        Duration.ofMinutes(2));
  }

  /** {@code name}, its log deleted: a log is appended to, and each holds one run. */
  private static String fresh(Path logDir, String name) throws IOException {
    Files.deleteIfExists(logDir.resolve(name + ".log"));
    return name;
  }

  /** "`/path/to.jar` (this tree's build; its work tree at commit ...)", for the report. */
  static String describe() {
    Path jar = path();
    String source = System.getProperty(PROPERTY) == null ? "this tree's build" : "-D" + PROPERTY;
    String head = git(jar, "log", "-1", "--format=%h \"%s\"");
    if (head == null) {
      return Report.f("`%s` (%s; not in a git work tree)", jar, source);
    }
    String dirty = git(jar, "status", "--porcelain", "--untracked-files=no");
    return Report.f(
        "`%s` (%s; its work tree at commit %s%s)",
        jar, source, head, dirty == null || dirty.isEmpty() ? "" : ", with uncommitted changes");
  }

  private static String git(Path jar, String... args) {
    List<String> command =
        Bench.concat(List.of("git", "-C", jar.getParent().toString()), List.of(args));
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : null;
    } catch (IOException | InterruptedException e) {
      return null;
    }
  }

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

  static final String AOT_CACHE = "-XX:AOTCache=";

  /**
   * What takes the place of the Deployment's {@code -XX:AOTCache}: the cache next to the jar on JDK
   * 25 and later, else (or with {@code -Dcapk.bench.aotCache=off}, to measure a build from before
   * the cache) that build's class-data archive next to it if it has one.
   */
  private static List<String> archiveFlags(List<String> jvm) throws IOException {
    if (javaFeature() >= 25 && !"off".equals(System.getProperty("capk.bench.aotCache"))) {
      return List.of(AOT_CACHE + aotCache(jvm));
    }
    Path jsa = sibling(".jsa");
    return Files.isRegularFile(jsa) ? List.of("-XX:SharedArchiveFile=" + jsa) : List.of();
  }

  /**
   * The jar's ahead-of-time cache ({@code .aot} next to it), trained as the image trains its own
   * (config/manager/Dockerfile: training/'s replay of the recorded evacuation, with the JVM flags
   * {@code jvm} but the cache's) when it is missing or older than the jar or the training jar.
   */
  static synchronized Path aotCache(List<String> jvm) throws IOException {
    Path cache = sibling(".aot");
    Path training = RepoPaths.root().resolve("training/target/vmi-eviction-training.jar");
    if (!Files.isRegularFile(training)) {
      throw new IllegalStateException(
          training + " is missing: build it (mvn -pl training package)");
    }
    List<String> command =
        new ArrayList<>(
            List.of(
                javaCommand(),
                "-jar",
                training.toString(),
                "--jar=" + path(),
                "--cache=" + cache,
                "--"));
    jvm.stream().filter(f -> !f.startsWith(AOT_CACHE)).forEach(command::add);
    // The command it was trained with: other JVM flags (-Dcapk.bench.extraJvmFlags) train anew.
    Path trainedBy = sibling(".aot.command");
    String line = String.join(" ", command);
    if (Files.isRegularFile(cache)
        && Files.isRegularFile(trainedBy)
        && Files.readString(trainedBy).equals(line)
        && Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(path())) > 0
        && Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(training)) > 0) {
      return cache;
    }
    Path log = Files.createTempFile("aot-training", ".log");
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException(
            "the ahead-of-time cache's training failed: " + Files.readString(log));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    Files.writeString(trainedBy, line);
    Bench.progress(
        "%s",
        Files.readAllLines(log).stream()
            .filter(l -> l.startsWith("training:"))
            .findFirst()
            .orElse("training done"));
    Files.delete(log);
    return cache;
  }

  private static Path sibling(String extension) {
    return path().resolveSibling(path().getFileName().toString().replace(".jar", extension));
  }

  /** The feature release of the controller's JDK, from its {@code release} file. */
  static int javaFeature() throws IOException {
    Path release = Path.of(javaCommand()).getParent().getParent().resolve("release");
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("JAVA_VERSION=\"(\\d+)").matcher(Files.readString(release));
    return m.find() ? Integer.parseInt(m.group(1)) : Runtime.version().feature();
  }

  static String javaCommand() {
    String home = System.getProperty(JAVA_HOME_PROPERTY, System.getProperty("java.home"));
    return Path.of(home, "bin", "java").toString();
  }

  /**
   * Fills {@link #ENV} and {@link #JVM} from the Deployment's container: -XX:MaxRAM from its memory
   * limit, its JAVA_TOOL_OPTIONS (the image's cache replaced by the one next to the jar, trained at
   * start: {@link #aotCache}), then the extra flags.
   */
  static {
    Object yaml;
    try {
      yaml =
          new Yaml()
              .load(Files.readString(RepoPaths.root().resolve("config/manager/manager.yaml")));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Object container = ((List<?>) at(yaml, "spec", "template", "spec", "containers")).get(0);
    String limit = String.valueOf(at(container, "resources", "limits", "memory"));
    if (!limit.matches("\\d+[MG]i")) {
      throw new IllegalStateException("manager.yaml: memory limit " + limit + " is not Mi or Gi");
    }
    JVM.add("-XX:MaxRAM=" + limit.replace("Mi", "m").replace("Gi", "g"));
    String options = System.getProperty("capk.bench.extraJvmFlags", "");
    for (Object e : (List<?>) at(container, "env")) {
      String name = String.valueOf(at(e, "name"));
      Object value = at(e, "value");
      if (name.equals("JAVA_TOOL_OPTIONS")) {
        options = value + " " + options;
      } else if (value != null) {
        ENV.put(name, String.valueOf(value));
      }
    }
    for (String flag : options.trim().split("\\s+")) {
      if (!flag.isEmpty()) {
        JVM.add(flag.startsWith(AOT_CACHE) ? AOT_CACHE + sibling(".aot") : flag);
      }
    }
  }

  private static Object at(Object yaml, String... keys) {
    for (String k : keys) {
      yaml = ((Map<?, ?>) yaml).get(k);
    }
    return yaml;
  }
}
