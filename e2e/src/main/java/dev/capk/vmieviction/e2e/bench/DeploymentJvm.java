package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.Yaml;

/**
 * The controller JVM exactly as config/manager/manager.yaml runs it, for a process on this machine:
 * the container's {@code JAVA_TOOL_OPTIONS} and its other environment (e.g. {@code
 * MALLOC_ARENA_MAX}) as they are, plus {@code -XX:MaxRAM} set to the container's memory limit,
 * since on this machine the JVM would size itself from the whole machine's memory instead. The
 * image's class-data-sharing archive ({@code -XX:SharedArchiveFile=/app/...}) becomes the archive
 * the build put next to the measured jar.
 */
final class DeploymentJvm {
  private DeploymentJvm() {}

  static final Path MANIFEST = Path.of("config", "manager", "manager.yaml");

  /** The JVM flags the Deployment's container ends up with. */
  static final List<String> JVM = flags();

  /** The Deployment's container environment besides JAVA_TOOL_OPTIONS. */
  static final Map<String, String> ENV = environment();

  static final String JAVA_HOME_PROPERTY = "capk.bench.controllerJavaHome";

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

  /**
   * The {@code java} that runs the controller: this JVM's, or the one of the JDK named by {@code
   * -Dcapk.bench.controllerJavaHome} (e.g. a newer JDK measured against the Deployment's).
   */
  static String javaCommand() {
    String home = System.getProperty(JAVA_HOME_PROPERTY, System.getProperty("java.home"));
    return Path.of(home, "bin", "java").toString();
  }

  private static List<String> flags() {
    Map<String, Object> container = container();
    List<String> flags = new ArrayList<>();
    flags.add("-XX:MaxRAM=" + memoryLimit(container));
    String options = env(container).getOrDefault("JAVA_TOOL_OPTIONS", "");
    for (String flag : options.trim().split("\\s+")) {
      if (flag.isEmpty()) {
        continue;
      }
      flags.add(
          flag.startsWith("-XX:SharedArchiveFile=")
              ? "-XX:SharedArchiveFile=" + archiveNextTo(ControllerJar.path())
              : flag);
    }
    String extra = System.getProperty(EXTRA_FLAGS_PROPERTY, "").trim();
    if (!extra.isEmpty()) {
      flags.addAll(Arrays.asList(extra.split("\\s+")));
    }
    return List.copyOf(flags);
  }

  /**
   * JVM flags added after the Deployment's, to measure a variant (a profiler, another compiler
   * setting) against the same benchmark: {@code -Dcapk.bench.extraJvmFlags="-XX:... -XX:..."}.
   * Reports name the flags the controller ran with.
   */
  static final String EXTRA_FLAGS_PROPERTY = "capk.bench.extraJvmFlags";

  private static Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>(env(container()));
    env.remove("JAVA_TOOL_OPTIONS");
    return env;
  }

  /** The archive the build makes next to {@code jar}: same name, {@code .jsa}. */
  static Path archiveNextTo(Path jar) {
    String name = jar.getFileName().toString();
    return jar.resolveSibling(name.replaceAll("\\.jar$", "") + ".jsa");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> container() {
    Path file = RepoPaths.root().resolve(MANIFEST);
    Map<String, Object> deployment;
    try {
      deployment = new Yaml().load(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, Object> spec = (Map<String, Object>) deployment.get("spec");
    Map<String, Object> template = (Map<String, Object>) spec.get("template");
    Map<String, Object> podSpec = (Map<String, Object>) template.get("spec");
    List<Map<String, Object>> containers = (List<Map<String, Object>>) podSpec.get("containers");
    return containers.get(0);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> env(Map<String, Object> container) {
    Map<String, String> out = new LinkedHashMap<>();
    Object env = container.get("env");
    if (env instanceof List<?> list) {
      for (Object o : list) {
        Map<String, Object> e = (Map<String, Object>) o;
        if (e.get("value") != null) {
          out.put(String.valueOf(e.get("name")), String.valueOf(e.get("value")));
        }
      }
    }
    return out;
  }

  /** The memory limit in the JVM's syntax (512Mi becomes 512m). */
  @SuppressWarnings("unchecked")
  private static String memoryLimit(Map<String, Object> container) {
    Map<String, Object> resources = (Map<String, Object>) container.get("resources");
    Map<String, Object> limits = (Map<String, Object>) resources.get("limits");
    String memory = String.valueOf(limits.get("memory"));
    for (String[] unit : Arrays.asList(new String[] {"Gi", "g"}, new String[] {"Mi", "m"})) {
      if (memory.endsWith(unit[0])) {
        return memory.substring(0, memory.length() - 2) + unit[1];
      }
    }
    throw new IllegalStateException(MANIFEST + ": memory limit " + memory + " is not in Mi or Gi");
  }
}
