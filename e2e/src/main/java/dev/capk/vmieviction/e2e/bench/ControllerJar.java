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
 * size itself from the whole machine), the image's class-data archive replaced by the one the build
 * put next to the jar, then {@code -Dcapk.bench.extraJvmFlags}; on the JDK of {@code
 * -Dcapk.bench.controllerJavaHome} if given. The Go peer: CAPK's original manager, a binary built
 * outside this repository named by {@code -Dcapk.bench.goController}.
 */
final class ControllerJar {
  static final String PROPERTY = "capk.bench.controllerJar";
  static final String GO_PROPERTY = "capk.bench.goController";
  static final String JAVA_HOME_PROPERTY = "capk.bench.controllerJavaHome";
  private static final Map<String, String> CONTAINER_ENV = containerEnv();

  /** The Deployment's container environment besides JAVA_TOOL_OPTIONS. */
  static final Map<String, String> ENV = environment();

  /** The JVM flags the Deployment's container ends up with. */
  static final List<String> JVM = flags();

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

  static ControllerProcess start(String name, Path logDir, List<String> flags, Duration timeout) {
    return start(name, logDir, ENV, JVM, flags, timeout);
  }

  /**
   * Starts the jar with {@code env} and JVM flags {@code jvm} and waits until /readyz answers 200
   * (see {@link ControllerProcess}); its log holds this run only.
   */
  static ControllerProcess start(
      String name,
      Path logDir,
      Map<String, String> env,
      List<String> jvm,
      List<String> flags,
      Duration timeout) {
    List<String> command = Bench.concat(List.of(javaCommand()), jvm);
    command.addAll(List.of("-jar", path().toString()));
    return launch(
        "controller-" + name,
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
    return launch(
        "go-controller-" + name,
        logDir,
        List.of(binary.toString()),
        Map.of(),
        "--health-addr",
        "--metrics-bind-addr",
        flags,
        Duration.ofMinutes(2));
  }

  /** {@link ControllerProcess#launch} on a fresh log (the log is appended to otherwise). */
  private static ControllerProcess launch(
      String name,
      Path logDir,
      List<String> command,
      Map<String, String> env,
      String healthFlag,
      String metricsFlag,
      List<String> flags,
      Duration timeout) {
    try {
      Files.deleteIfExists(logDir.resolve(name + ".log"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return ControllerProcess.launch(
        name, logDir, command, env, healthFlag, metricsFlag, flags, timeout);
  }

  /** "`/path/to.jar` (this tree's build; its work tree at commit ...)", for the report. */
  static String describe() {
    Path jar = path();
    String source = System.getProperty(PROPERTY) == null ? "this tree's build" : "-D" + PROPERTY;
    String head = git(jar, "rev-parse", "--short", "HEAD");
    if (head == null) {
      return Report.f("`%s` (%s; not in a git work tree)", jar, source);
    }
    String subject = git(jar, "log", "-1", "--format=%s");
    String dirty = git(jar, "status", "--porcelain", "--untracked-files=no");
    return Report.f(
        "`%s` (%s; its work tree at commit %s \"%s\"%s)",
        jar,
        source,
        head,
        subject == null ? "" : subject,
        dirty == null || dirty.isEmpty() ? "" : ", with uncommitted changes");
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

  static String javaCommand() {
    String home = System.getProperty(JAVA_HOME_PROPERTY, System.getProperty("java.home"));
    return Path.of(home, "bin", "java").toString();
  }

  /** -XX:MaxRAM from the container's memory limit, its JAVA_TOOL_OPTIONS, then the extra flags. */
  private static List<String> flags() {
    String limit = CONTAINER_ENV.get("memory limit");
    if (!limit.matches("\\d+[MG]i")) {
      throw new IllegalStateException("manager.yaml: memory limit " + limit + " is not Mi or Gi");
    }
    List<String> flags = new ArrayList<>();
    flags.add("-XX:MaxRAM=" + limit.replace("Mi", "m").replace("Gi", "g"));
    Path archive = path().resolveSibling(path().getFileName().toString().replace(".jar", ".jsa"));
    String options =
        CONTAINER_ENV.getOrDefault("JAVA_TOOL_OPTIONS", "")
            + " "
            + System.getProperty("capk.bench.extraJvmFlags", "");
    for (String flag : options.trim().split("\\s+")) {
      if (!flag.isEmpty()) {
        boolean cds = flag.startsWith("-XX:SharedArchiveFile=");
        flags.add(cds ? "-XX:SharedArchiveFile=" + archive : flag);
      }
    }
    return List.copyOf(flags);
  }

  private static Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>(CONTAINER_ENV);
    env.remove("JAVA_TOOL_OPTIONS");
    env.remove("memory limit");
    return env;
  }

  /** The Deployment container's env values, and its memory limit as "memory limit". */
  @SuppressWarnings("unchecked")
  private static Map<String, String> containerEnv() {
    Map<String, Object> container;
    try {
      Map<String, Object> deployment =
          new Yaml()
              .load(Files.readString(RepoPaths.root().resolve("config/manager/manager.yaml")));
      Map<String, Object> pod =
          (Map<String, Object>)
              ((Map<String, Object>) ((Map<String, Object>) deployment.get("spec")).get("template"))
                  .get("spec");
      container = ((List<Map<String, Object>>) pod.get("containers")).get(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (Map<String, Object> e :
        (List<Map<String, Object>>) container.getOrDefault("env", List.of())) {
      if (e.get("value") != null) {
        out.put(String.valueOf(e.get("name")), String.valueOf(e.get("value")));
      }
    }
    Map<String, Object> limits =
        (Map<String, Object>) ((Map<String, Object>) container.get("resources")).get("limits");
    out.put("memory limit", String.valueOf(limits.get("memory")));
    return out;
  }
}
