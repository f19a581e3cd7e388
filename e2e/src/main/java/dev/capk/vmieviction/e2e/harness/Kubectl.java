package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs the real kubectl (the build the project pins) against one kubeconfig. */
public final class Kubectl {
  private final Path binary;
  private final Path kubeconfig;

  /** What one kubectl run printed and how it ended. */
  public record Result(int exitCode, String stdout, String stderr) {
    public boolean ok() {
      return exitCode == 0;
    }
  }

  public Kubectl(Path binary, Path kubeconfig) {
    this.binary = binary;
    this.kubeconfig = kubeconfig;
  }

  public Path binary() {
    return binary;
  }

  /**
   * Runs {@code kubectl --kubeconfig K args...} with optional stdin, waiting at most {@code
   * timeout}.
   */
  public Result run(String stdin, Duration timeout, String... args) {
    List<String> command =
        new ArrayList<>(List.of(binary.toString(), "--kubeconfig", kubeconfig.toString()));
    command.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(command).start();
      CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
      CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
      try (OutputStream in = p.getOutputStream()) {
        if (stdin != null) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
      }
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor();
        throw new IllegalStateException(
            "kubectl " + String.join(" ", args) + " did not finish within " + timeout);
      }
      return new Result(p.exitValue(), out.join(), err.join());
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + binary + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running kubectl", e);
    }
  }

  /** Runs kubectl and fails with its output when it exits non-zero. */
  public String runOrFail(String stdin, String... args) {
    Result r = run(stdin, Duration.ofMinutes(2), args);
    if (!r.ok()) {
      throw new IllegalStateException(
          "kubectl "
              + String.join(" ", args)
              + " failed (exit "
              + r.exitCode()
              + "): "
              + r.stderr().strip()
              + (r.stdout().isBlank() ? "" : "\n" + r.stdout().strip()));
    }
    return r.stdout();
  }

  /**
   * Whether node {@code node} is cordoned ({@code spec.unschedulable: true}); a failed read counts
   * as not cordoned, for waits that poll.
   */
  public boolean cordoned(String node) {
    return run(
            null,
            Duration.ofSeconds(10),
            "get",
            "node",
            node,
            "-o",
            "jsonpath={.spec.unschedulable}")
        .stdout()
        .contains("true");
  }

  /** {@code kubectl apply -f -}: creates or updates every object in {@code yaml}. */
  public String apply(String yaml) {
    return runOrFail(yaml, "apply", "-f", "-");
  }

  private static String read(java.io.InputStream in) {
    try (in) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }
}
