package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * No container engine runs here, so config/manager/Dockerfile is checked as text: it builds the jar
 * itself from pinned base images, runs it as a numeric non-root user, and its ENTRYPOINT is what
 * the Deployments' args complete into a valid command line.
 */
class ImageDefinitionTest {

  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern FROM =
      Pattern.compile("(?im)^FROM\\s+(?:--platform=\\S+\\s+)?(\\S+)(?:\\s+AS\\s+(\\S+))?\\s*$");

  /** Instructions, with continuation lines joined and comments left out. */
  static List<String> instructions(String dockerfile) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : dockerfile.split("\n")) {
      String t = line.strip();
      if (current.length() == 0 && (t.isEmpty() || t.startsWith("#"))) {
        continue;
      }
      if (t.endsWith("\\")) {
        current.append(t, 0, t.length() - 1).append(' ');
      } else {
        out.add(current.append(t).toString());
        current.setLength(0);
      }
    }
    return out;
  }

  static String dockerfile() throws IOException {
    return Files.readString(REPO.resolve("config/manager/Dockerfile"));
  }

  /** The last stage's instructions: what the image is. */
  static List<String> runtimeStage(List<String> all) {
    int last = 0;
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).toUpperCase().startsWith("FROM ")) {
        last = i;
      }
    }
    return all.subList(last, all.size());
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> container(Path manifest, String containerName) throws IOException {
    Object doc = new Yaml().load(Files.readString(manifest));
    if (doc instanceof List<?> patch) { // config/capk-sidecar's JSON patch: the added container
      doc = ((Map<String, Object>) patch.get(0)).get("value");
      return (Map<String, Object>) doc;
    }
    Map<String, Object> spec =
        (Map<String, Object>)
            ((Map<String, Object>)
                    ((Map<String, Object>) ((Map<String, Object>) doc).get("spec")).get("template"))
                .get("spec");
    for (Object c : (List<Object>) spec.get("containers")) {
      Map<String, Object> m = (Map<String, Object>) c;
      if (containerName.equals(m.get("name"))) {
        return m;
      }
    }
    throw new AssertionError("no container " + containerName + " in " + manifest);
  }

  @Test
  void everyBaseImageIsPinnedByVersionOrDigest() throws IOException {
    Matcher m = FROM.matcher(dockerfile());
    int stages = 0;
    while (m.find()) {
      stages++;
      String image = m.group(1);
      boolean digest = image.matches(".+@sha256:[0-9a-f]{64}");
      String tag = image.contains(":") ? image.substring(image.lastIndexOf(':') + 1) : "";
      boolean version = tag.matches(".*\\d+\\.\\d+\\.\\d+.*") && !tag.contains("latest");
      assertTrue(digest || version, image + " is not pinned to a version (x.y.z) or a digest");
    }
    assertTrue(stages >= 2, "multi-stage: a build stage and a runtime stage");
  }

  @Test
  void theJarIsBuiltInTheImageNotCopiedFromTheHost() throws IOException {
    List<String> all = instructions(dockerfile());
    assertTrue(
        all.stream()
            .anyMatch(i -> i.startsWith("RUN ") && i.contains("mvn ") && i.contains("package")),
        "a build stage runs Maven's package");
    for (String i : all) {
      if (i.toUpperCase().startsWith("COPY ") || i.toUpperCase().startsWith("ADD ")) {
        boolean fromStage = i.contains("--from=");
        assertFalse(
            !fromStage && (i.contains("target/") || i.endsWith(".jar") || i.contains(".jar ")),
            "copies a build output from the host: " + i);
      }
    }
    List<String> runtime = runtimeStage(all);
    assertTrue(
        runtime.stream().anyMatch(i -> i.startsWith("COPY --from=") && i.contains(".jar")),
        "the runtime stage takes the jar from the build stage");
    String ignore = Files.readString(REPO.resolve(".dockerignore"));
    assertTrue(ignore.lines().anyMatch(l -> l.strip().equals("**/target")), ".dockerignore");
  }

  @Test
  @SuppressWarnings("unchecked")
  void runsAsTheNumericNonRootUserTheDeploymentsRequire() throws IOException {
    List<String> runtime = runtimeStage(instructions(dockerfile()));
    List<String> users = runtime.stream().filter(i -> i.startsWith("USER ")).toList();
    assertFalse(users.isEmpty(), "the runtime stage sets USER");
    String user = users.get(users.size() - 1).substring("USER ".length()).strip();
    assertTrue(user.matches("\\d+(:\\d+)?"), "numeric, so runAsNonRoot can check it: " + user);
    int uid = Integer.parseInt(user.split(":")[0]);
    assertNotEquals(0, uid);

    Map<String, Object> pod =
        (Map<String, Object>)
            ((Map<String, Object>)
                    ((Map<String, Object>)
                            ((Map<String, Object>)
                                    new Yaml()
                                        .load(
                                            Files.readString(
                                                REPO.resolve("config/manager/manager.yaml"))))
                                .get("spec"))
                        .get("template"))
                .get("spec");
    assertEquals(uid, ((Map<String, Object>) pod.get("securityContext")).get("runAsUser"));
    Map<String, Object> sidecar =
        container(REPO.resolve("config/capk-sidecar/manager_container_patch.yaml"), null);
    Map<String, Object> sidecarSecurity = (Map<String, Object>) sidecar.get("securityContext");
    assertEquals(uid, sidecarSecurity.get("runAsUser"));
    assertEquals(true, sidecarSecurity.get("readOnlyRootFilesystem"));
  }

  @Test
  @SuppressWarnings("unchecked")
  void entrypointRunsTheJarAndEachDeploymentsArgsAreValidFlags() throws IOException {
    List<String> runtime = runtimeStage(instructions(dockerfile()));
    List<String> entrypoints = runtime.stream().filter(i -> i.startsWith("ENTRYPOINT ")).toList();
    assertEquals(1, entrypoints.size(), "one ENTRYPOINT in the runtime stage");
    String entrypoint = entrypoints.get(0).substring("ENTRYPOINT ".length()).strip();
    List<String> exec = (List<String>) new Yaml().load(entrypoint); // exec form is a JSON array
    assertEquals("java", exec.get(0));
    int jar = exec.indexOf("-jar");
    assertTrue(jar > 0 && jar == exec.size() - 2, "java ... -jar <jar>, flags come as args");
    String jarPath = exec.get(jar + 1);
    assertTrue(
        runtime.stream().anyMatch(i -> i.startsWith("COPY --from=") && i.endsWith(" " + jarPath)),
        "the ENTRYPOINT's jar is the one copied from the build stage: " + jarPath);

    for (Map<String, Object> c :
        List.of(
            container(REPO.resolve("config/manager/manager.yaml"), "manager"),
            container(REPO.resolve("config/capk-sidecar/manager_container_patch.yaml"), null))) {
      assertFalse(c.containsKey("command"), "no command: the image's ENTRYPOINT runs: " + c);
      List<String> args = (List<String>) c.get("args");
      ManagerOptions options = new ManagerOptions();
      ManagerOptions.commandLine(options).parseArgs(args.toArray(String[]::new));
      assertEquals(List.of(), options.validate(), String.join(" ", args));
    }
  }

  @Test
  void theAheadOfTimeCacheIsTrainedWithTheDeploymentsJvmFlagsWhereTheyLookForIt()
      throws IOException {
    List<String> runtime = runtimeStage(instructions(dockerfile()));
    List<String> training =
        runtime.stream().filter(i -> i.startsWith("RUN ") && i.contains("training.jar")).toList();
    assertEquals(1, training.size(), "one training run in the runtime stage");
    String run = training.get(0);
    List<String> flags =
        List.of(run.substring(run.indexOf(" -- ") + 4, run.indexOf("&&")).trim().split("\\s+"));
    java.util.regex.Matcher cache =
        Pattern.compile("--cache=(\\S+)").matcher(run.substring(0, run.indexOf(" -- ")));
    assertTrue(cache.find(), run);
    for (Path manifest :
        List.of(
            REPO.resolve("config/manager/manager.yaml"),
            REPO.resolve("config/capk-sidecar/manager_container_patch.yaml"))) {
      Map<String, Object> c =
          container(manifest, manifest.toString().contains("sidecar") ? null : "manager");
      String options =
          ((List<?>) c.get("env"))
              .stream()
                  .map(e -> (Map<?, ?>) e)
                  .filter(e -> "JAVA_TOOL_OPTIONS".equals(e.get("name")))
                  .map(e -> String.valueOf(e.get("value")))
                  .findFirst()
                  .orElseThrow();
      List<String> deployed = List.of(options.trim().split("\\s+"));
      assertTrue(deployed.contains("-XX:AOTCache=" + cache.group(1)), manifest + ": " + options);
      assertEquals(
          deployed.stream()
              .filter(f -> !f.startsWith("-XX:AOTCache=") && !f.startsWith("-Djava.io.tmpdir="))
              .toList(),
          flags,
          manifest + ": the training run's JVM flags are the Deployment's");
    }
  }
}
