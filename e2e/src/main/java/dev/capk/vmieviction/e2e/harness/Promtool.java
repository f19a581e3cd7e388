package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus' real promtool, built from source by hack/build-promtool.sh and cached outside the
 * repo. {@code PROMTOOL} (or -Dpromtool) names a ready binary; otherwise the script is run, which
 * only checks the version when the cache is warm.
 */
public record Promtool(Path binary) {

  /** What one promtool run printed and how it ended. */
  public record Result(int exitCode, String output) {}

  private static Promtool located;

  public static synchronized Promtool locate() {
    if (located == null) {
      located = new Promtool(find());
    }
    return located;
  }

  private static Path find() {
    String configured = System.getProperty("promtool", System.getenv("PROMTOOL"));
    if (configured != null && !configured.isBlank()) {
      Path bin = Path.of(configured);
      if (!Files.isExecutable(bin)) {
        throw new IllegalStateException(
            "PROMTOOL=" + bin + " is not executable; run hack/build-promtool.sh or unset PROMTOOL");
      }
      return bin;
    }
    Path script = RepoPaths.root().resolve("hack/build-promtool.sh");
    try {
      Path log = Files.createTempFile("build-promtool", ".log");
      Process p = new ProcessBuilder("bash", script.toString()).redirectError(log.toFile()).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!p.waitFor(60, TimeUnit.MINUTES) || p.exitValue() != 0) {
        throw new IllegalStateException(
            "hack/build-promtool.sh failed:\n" + ProcessLogs.tail(log, 30));
      }
      String[] lines = out.split("\n");
      return Path.of(lines[lines.length - 1].strip());
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while building promtool", e);
    }
  }

  /** Runs {@code promtool args...} in {@code dir}; output is stdout and stderr together. */
  public Result run(Path dir, String... args) {
    List<String> command = new ArrayList<>(List.of(binary.toString()));
    command.addAll(List.of(args));
    try {
      Process p =
          new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
      CompletableFuture<byte[]> out =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return p.getInputStream().readAllBytes();
                } catch (IOException e) {
                  return new byte[0];
                }
              });
      if (!p.waitFor(2, TimeUnit.MINUTES)) {
        p.destroyForcibly().waitFor();
        throw new IllegalStateException("promtool " + String.join(" ", args) + " did not finish");
      }
      return new Result(p.exitValue(), new String(out.join(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + binary + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running promtool", e);
    }
  }
}
