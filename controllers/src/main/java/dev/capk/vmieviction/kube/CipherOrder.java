package dev.capk.vmieviction.kube;

import io.kubernetes.client.openapi.ApiClient;
import java.util.Comparator;
import java.util.List;
import okhttp3.CipherSuite;
import okhttp3.ConnectionSpec;

/**
 * The TLS cipher suites the controller's API clients offer, ChaCha20-Poly1305 first.
 *
 * <p>Why: the Deployment's JVM compiles with C1 only (config/manager/manager.yaml), which has no
 * AES-GCM intrinsics, so every byte of every watch stream and answer is decrypted by AES and GHASH
 * in plain Java: about four times the CPU of ChaCha20-Poly1305 in the same JVM (5-7% of an
 * evacuation's CPU in the cost benchmark's profile, GHASH its largest single method). A Go server
 * (every kube-apiserver) takes ChaCha20-Poly1305 when the client lists it first; the AES-GCM suites
 * stay offered behind it for servers that refuse ChaCha20 (FIPS builds), so no server that answered
 * before is refused now. Which versions and suites are allowed at all is OkHttp's MODERN_TLS, as
 * before: only their order changes.
 */
public final class CipherOrder {
  private CipherOrder() {}

  /** MODERN_TLS with the ChaCha20-Poly1305 suites moved ahead of the others (a stable sort). */
  static final ConnectionSpec CHACHA20_FIRST =
      new ConnectionSpec.Builder(ConnectionSpec.MODERN_TLS)
          .cipherSuites(
              ConnectionSpec.MODERN_TLS.cipherSuites().stream()
                  .sorted(
                      Comparator.comparing((CipherSuite s) -> !s.javaName().contains("CHACHA20")))
                  .toArray(CipherSuite[]::new))
          .build();

  /** {@code client} with its HTTP client offering {@link #CHACHA20_FIRST}; returns it. */
  public static ApiClient preferChaCha20(ApiClient client) {
    client.setHttpClient(
        client
            .getHttpClient()
            .newBuilder()
            .connectionSpecs(List.of(CHACHA20_FIRST, ConnectionSpec.CLEARTEXT))
            .build());
    return client;
  }
}
