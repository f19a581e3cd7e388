package dev.capk.vmieviction.e2e.integration.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.kube.ConnectionThreads;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A guest client's open HTTP/2 connection holds no platform thread: OkHttp's reader of each
 * connection runs on a virtual thread ({@link ConnectionThreads}). Against a real kube-apiserver,
 * which speaks HTTP/2; the same clients without it hold one platform reader per connection, which
 * is what a thousand tenants' connections cost before.
 */
class ConnectionThreadsIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("infra");

  static final int CONNECTIONS = 5;

  @Test
  void openConnectionsOnVirtualThreadsHoldNoPlatformReader() throws Exception {
    assertEquals(0, platformReadersAdded(ConnectionThreads::virtual));
  }

  @Test
  void openConnectionsAsOkHttpBuildsThemHoldOnePlatformReaderEach() throws Exception {
    assertTrue(platformReadersAdded(b -> b) >= CONNECTIONS);
  }

  /**
   * Opens {@value #CONNECTIONS} connections, one per client (as each tenant identity has its own),
   * each left open in its pool after one HTTP/2 GET; the platform threads that OkHttp names after
   * the server's host, added meanwhile; then closes them.
   */
  private static long platformReadersAdded(UnaryOperator<OkHttpClient.Builder> threads)
      throws Exception {
    ApiClient api = ClientBuilder.kubeconfig(kubeconfig()).build();
    String host = okhttp3.HttpUrl.get(api.getBasePath()).host();
    long before = platformReaders(host);
    List<OkHttpClient> clients = new ArrayList<>();
    try {
      for (int i = 0; i < CONNECTIONS; i++) {
        // A fresh pool per client: its own connection, as a tenant's own TLS identity makes.
        OkHttpClient http =
            threads
                .apply(
                    api.getHttpClient().newBuilder().connectionPool(new okhttp3.ConnectionPool()))
                .build();
        clients.add(http);
        Request request = new Request.Builder().url(api.getBasePath() + "/version").build();
        try (Response response = http.newCall(request).execute()) {
          assertEquals(200, response.code());
          assertEquals(Protocol.HTTP_2, response.protocol());
        }
      }
      return platformReaders(host) - before;
    } finally {
      clients.forEach(c -> c.connectionPool().evictAll());
    }
  }

  private static long platformReaders(String host) {
    // Virtual threads are not listed here: only platform threads are.
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("OkHttp " + host))
        .count();
  }

  private static KubeConfig kubeconfig() throws Exception {
    return KubeConfig.loadKubeConfig(new StringReader(infra.cluster().adminKubeconfigYaml()));
  }
}
