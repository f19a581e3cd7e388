package dev.capk.vmieviction.e2e.harness;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the repository root (hack/, config/) from a test run or a demo run. */
public final class RepoPaths {
  private RepoPaths() {}

  /**
   * The repository root: system property {@code capk.repoRoot}, else the nearest parent holding
   * hack/versions.env.
   */
  public static Path root() {
    String configured = System.getProperty("capk.repoRoot");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured).toAbsolutePath().normalize();
    }
    Path dir = Path.of("").toAbsolutePath();
    for (Path p = dir; p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("hack/versions.env"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "cannot find the repository root (no hack/versions.env above "
            + dir
            + "); set -Dcapk.repoRoot=<path>");
  }

  /**
   * Where harness processes write their data and logs: {@code <repo>/e2e/target/clusters}, or
   * -Dcapk.workDir.
   */
  public static Path workDir() {
    String configured = System.getProperty("capk.workDir");
    return configured != null && !configured.isBlank()
        ? Path.of(configured).toAbsolutePath()
        : root().resolve("e2e/target/clusters");
  }
}
