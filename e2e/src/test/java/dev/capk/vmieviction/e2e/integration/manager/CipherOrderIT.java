package dev.capk.vmieviction.e2e.integration.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.kube.CipherOrder;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.StringReader;
import okhttp3.CipherSuite;
import okhttp3.Handshake;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The controller's API clients offer ChaCha20-Poly1305 first, and a real kube-apiserver (Go) takes
 * it; a client as client-java builds it gets AES-GCM from the same server (what the Deployment's
 * C1-only JVM decrypts at about four times the CPU).
 */
class CipherOrderIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("infra");

  @Test
  void aRealApiServerNegotiatesChaCha20WithTheControllersClients() throws Exception {
    CipherSuite suite = negotiated(CipherOrder.preferChaCha20(client()));
    assertEquals(CipherSuite.TLS_CHACHA20_POLY1305_SHA256, suite);
  }

  @Test
  void theSameServerNegotiatesAesGcmWithClientJavasDefaultOrder() throws Exception {
    CipherSuite suite = negotiated(client());
    assertTrue(suite.javaName().contains("_GCM_"), "negotiated " + suite);
  }

  private static ApiClient client() throws Exception {
    KubeConfig kc =
        KubeConfig.loadKubeConfig(new StringReader(infra.cluster().adminKubeconfigYaml()));
    return ClientBuilder.kubeconfig(kc).build();
  }

  /** The suite of a fresh connection's handshake, for one GET of /version. */
  private static CipherSuite negotiated(ApiClient client) throws Exception {
    Request request = new Request.Builder().url(client.getBasePath() + "/version").build();
    try (Response response = client.getHttpClient().newCall(request).execute()) {
      assertEquals(200, response.code());
      Handshake handshake = response.handshake();
      assertNotNull(handshake, "a TLS connection");
      return handshake.cipherSuite();
    }
  }
}
