package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.kube.LenientJson;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1PodList;
import java.math.BigDecimal;
import java.security.GeneralSecurityException;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import org.slf4j.LoggerFactory;

/**
 * The one-time work of a command's first requests, done on a second thread while the command's own
 * thread parses flags and reads the kubeconfig. A CLI call is mostly this work, run once in a fresh
 * JVM: the client's JSON adapters and OkHttp with the platform's trust store (an ApiClient), the
 * key shares a JDK client offers in its TLS 1.3 hello (an X25519 and a P-256 key; the first P-256
 * key builds a table of the curve's points), and the readers of a Node (with its quantities and
 * times) and, for a drain, of a pod list. The command's thread finds each of them ready, or waits
 * for the class being made. Only the readers are kept (by the Gson instances the command uses); a
 * failure here is left for the command's own call to meet and report.
 */
final class ClientWarmUp {
  /** A Node with a quantity and a time: its reader, their parsers. */
  private static final String SMALL_NODE =
      "{\"metadata\":{\"name\":\"n\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
          + "\"status\":{\"capacity\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}";

  private ClientWarmUp() {}

  /** Starts it; {@code pods}: the command lists pods (drain), so their reader is made too. */
  static void start(boolean pods) {
    // Logging first, on this thread: SLF4J replays (and says so on stderr) calls made by a second
    // thread while it starts.
    LoggerFactory.getILoggerFactory();
    Thread.ofPlatform().daemon().name("cli-warm-up").start(() -> run(pods));
    Thread.ofPlatform().daemon().name("cli-warm-up-tls").start(ClientWarmUp::keyShares);
  }

  private static void run(boolean pods) {
    try {
      // First, as a drain's --timeout needs it within the flags: BigDecimal's tables (Quantity
      // too).
      BigDecimal.valueOf(1);
      new ApiClient();
      LenientJson.parse(SMALL_NODE, V1Node.class);
      if (pods) {
        JSON.getGson().getAdapter(V1PodList.class);
      }
    } catch (ApiException | RuntimeException e) {
      // The command's own call does the same work and reports what fails.
    }
  }

  private static void keyShares() {
    try {
      KeyPairGenerator ec = KeyPairGenerator.getInstance("EC");
      ec.initialize(new ECGenParameterSpec("secp256r1"));
      ec.generateKeyPair();
      KeyPairGenerator.getInstance("X25519").generateKeyPair();
    } catch (GeneralSecurityException | RuntimeException e) {
      // The handshake does the same work and reports what fails.
    }
  }
}
