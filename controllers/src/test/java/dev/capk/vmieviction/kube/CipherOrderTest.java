package dev.capk.vmieviction.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kubernetes.client.openapi.ApiClient;
import java.util.HashSet;
import java.util.List;
import okhttp3.CipherSuite;
import okhttp3.ConnectionSpec;
import org.junit.jupiter.api.Test;

class CipherOrderTest {
  @Test
  void chaCha20SuitesComeFirstAndNoSuiteIsAddedOrDropped() {
    List<CipherSuite> ordered = CipherOrder.CHACHA20_FIRST.cipherSuites();
    assertEquals(CipherSuite.TLS_CHACHA20_POLY1305_SHA256, ordered.get(0));
    assertEquals(CipherSuite.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, ordered.get(1));
    assertEquals(CipherSuite.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, ordered.get(2));
    assertEquals(new HashSet<>(ConnectionSpec.MODERN_TLS.cipherSuites()), new HashSet<>(ordered));
    assertEquals(ConnectionSpec.MODERN_TLS.tlsVersions(), CipherOrder.CHACHA20_FIRST.tlsVersions());
  }

  @Test
  void theClientKeepsItsTimeoutsAndStillSpeaksPlainHttp() {
    ApiClient client = new ApiClient().setReadTimeout(1234);
    CipherOrder.preferChaCha20(client);
    assertEquals(1234, client.getHttpClient().readTimeoutMillis());
    assertEquals(
        List.of(CipherOrder.CHACHA20_FIRST, ConnectionSpec.CLEARTEXT),
        client.getHttpClient().connectionSpecs());
  }
}
