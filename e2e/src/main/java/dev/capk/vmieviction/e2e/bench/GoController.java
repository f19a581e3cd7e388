package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.FreePorts;
import dev.capk.vmieviction.e2e.harness.Pki;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The peer of the cost benchmark: CAPK's original Go manager (its VMI eviction controller, with the
 * KubevirtMachine and KubevirtCluster controllers it ships beside), a binary built outside this
 * repository and named by {@code -Dcapk.bench.goController=/path/to/manager}. The benchmark never
 * builds it. Every listener it opens is bound to loopback: health and metrics by flag, the webhook
 * server (which it starts for KubevirtMachineTemplate and which needs a certificate to start) by
 * the local build (see the report's note), with a throw-away certificate written here.
 */
final class GoController {
  static final String PROPERTY = "capk.bench.goController";

  private GoController() {}

  /** The binary named by the property, or null when the peer is not to be measured. */
  static Path binary() {
    String configured = System.getProperty(PROPERTY);
    if (configured == null || configured.isBlank()) {
      return null;
    }
    Path binary = Path.of(configured).toAbsolutePath().normalize();
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException("-D" + PROPERTY + " names no executable file: " + binary);
    }
    return binary;
  }

  /**
   * Starts the manager against {@code kubeconfig} with {@code --concurrency=workers} and waits
   * until its /readyz answers 200.
   */
  static ControllerProcess start(
      String name, Path binary, Path logDir, Path kubeconfig, int workers, Duration timeout) {
    Path certs = logDir.resolve("go-webhook-certs");
    writeWebhookCertificate(certs);
    List<String> flags =
        List.of(
            "--kubeconfig=" + kubeconfig,
            "--concurrency=" + workers,
            "--leader-elect=false",
            "--webhook-port=" + FreePorts.next(),
            "--webhook-cert-dir=" + certs);
    try {
      Files.deleteIfExists(logDir.resolve("go-controller-" + name + ".log"));
    } catch (IOException ignored) {
      // appended to instead
    }
    return ControllerProcess.launch(
        "go-controller-" + name,
        logDir,
        List.of(binary.toString()),
        Map.of(),
        "--health-addr",
        "--metrics-bind-addr",
        flags,
        timeout);
  }

  private static void writeWebhookCertificate(Path dir) {
    try {
      Files.createDirectories(dir);
      Pki.Issued cert = Pki.newAuthority("bench-go-webhook-ca").serving("localhost", List.of());
      Pki.write(dir.resolve("tls.crt"), cert.certificatePem());
      Pki.write(dir.resolve("tls.key"), cert.privateKeyPem());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
