package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Installs CustomResourceDefinitions and waits until the API server serves them. */
public final class Crds {
  private Crds() {}

  /**
   * The CRDs of the objects the controller reads and does not own (KubeVirt, Cluster API): test
   * fixtures.
   */
  public static Path testCrdDir() {
    return RepoPaths.root().resolve("config/test-crds");
  }

  /** Applies every YAML file in {@code dir} and waits until each CRD is Established. */
  public static void install(KubeCluster cluster, Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        Kubectl kubectl = cluster.kubectl();
        kubectl.runOrFail(null, "apply", "--server-side", "-f", file.toString());
        kubectl.runOrFail(
            null, "wait", "--for=condition=Established", "--timeout=60s", "-f", file.toString());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read CRDs from " + dir, e);
    }
  }

  public static void installTestCrds(KubeCluster cluster) {
    install(cluster, testCrdDir());
  }
}
