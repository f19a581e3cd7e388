package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.api.kubevirt.KubeVirt;
import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.KubeVirtList;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The KubeVirt CR read when no API server answers at all: no server is started, none imitated. */
class KubeVirtClusterDefaultsTest {

  @Test
  void anApiServerThatCannotBeReachedMeansUnknownNotAnException() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort(); // closed again before the call: the connection is refused
    }
    ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + closedPort);
    client.setConnectTimeout(1000);
    GenericKubernetesApi<KubeVirt, KubeVirtList> api =
        new GenericKubernetesApi<>(
            KubeVirt.class,
            KubeVirtList.class,
            KubeVirtApi.GROUP,
            KubeVirtApi.VERSION,
            KubeVirtApi.KUBEVIRT_PLURAL,
            client);

    KubeVirtClusterDefaults defaults =
        new KubeVirtClusterDefaults(api, Duration.ofMinutes(1), Clock.systemUTC());

    assertEquals(Optional.empty(), defaults.evictionStrategy());
  }

  /**
   * Not an imitation of the Kubernetes API: an endpoint that answers every request "200, empty
   * body", as a misconfigured proxy does. The client reports that as a success without an object.
   */
  @Test
  void aSuccessWithoutABodyMeansUnknownNotAnException() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Thread answering =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try (java.net.Socket s = server.accept()) {
                    java.io.BufferedReader in =
                        new java.io.BufferedReader(
                            new java.io.InputStreamReader(
                                s.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII));
                    for (String line = in.readLine();
                        line != null && !line.isEmpty();
                        line = in.readLine()) {
                      // the request's head; it has no body
                    }
                    s.getOutputStream()
                        .write(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                  } catch (java.io.IOException e) {
                    return;
                  }
                }
              },
              "empty-200");
      answering.setDaemon(true);
      answering.start();
      ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + server.getLocalPort());
      GenericKubernetesApi<KubeVirt, KubeVirtList> api =
          new GenericKubernetesApi<>(
              KubeVirt.class,
              KubeVirtList.class,
              KubeVirtApi.GROUP,
              KubeVirtApi.VERSION,
              KubeVirtApi.KUBEVIRT_PLURAL,
              client);

      KubeVirtClusterDefaults defaults =
          new KubeVirtClusterDefaults(api, Duration.ofMinutes(1), Clock.systemUTC());

      assertEquals(Optional.empty(), defaults.evictionStrategy());
    }
  }
}
