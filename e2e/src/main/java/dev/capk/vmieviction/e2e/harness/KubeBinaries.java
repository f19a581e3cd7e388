package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real Kubernetes binaries, built from source by hack/build-k8s.sh and cached outside the repo.
 * {@code K8S_BIN_DIR} (or -Dk8s.binDir) points at a ready directory; otherwise the script is run,
 * which only checks versions when the cache is warm.
 */
public record KubeBinaries(Path dir) {
  public static final List<String> COMPONENTS =
      List.of(
          "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok");

  private static KubeBinaries located;

  public static synchronized KubeBinaries locate() {
    if (located == null) {
      located = new KubeBinaries(findDir());
    }
    return located;
  }

  private static Path findDir() {
    String configured = System.getProperty("k8s.binDir", System.getenv("K8S_BIN_DIR"));
    if (configured != null && !configured.isBlank()) {
      Path dir = Path.of(configured);
      for (String c : COMPONENTS) {
        if (!Files.isExecutable(dir.resolve(c))) {
          throw new IllegalStateException(
              "K8S_BIN_DIR="
                  + dir
                  + " has no executable "
                  + c
                  + "; run hack/build-k8s.sh or unset K8S_BIN_DIR");
        }
      }
      return dir;
    }
    return runBuildScript();
  }

  private static Path runBuildScript() {
    Path script = RepoPaths.root().resolve("hack/build-k8s.sh");
    try {
      Path log = Files.createTempFile("build-k8s", ".log");
      Process p =
          new ProcessBuilder("bash", script.toString())
              .redirectErrorStream(false)
              .redirectError(log.toFile())
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!p.waitFor(90, TimeUnit.MINUTES) || p.exitValue() != 0) {
        throw new IllegalStateException(
            "hack/build-k8s.sh failed (exit " + p.exitValue() + "):\n" + ProcessLogs.tail(log, 30));
      }
      String[] lines = out.split("\n");
      return Path.of(lines[lines.length - 1].strip());
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while building Kubernetes binaries", e);
    }
  }

  public Path path(String component) {
    return dir.resolve(component);
  }

  public Path kubectl() {
    return path("kubectl");
  }
}
