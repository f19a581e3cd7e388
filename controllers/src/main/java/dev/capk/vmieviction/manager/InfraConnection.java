package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.eviction.VmiEvents;
import dev.capk.vmieviction.infra.InfraBindings;
import dev.capk.vmieviction.kube.CipherOrder;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Set;

/**
 * One cluster as the process reaches it: the cluster of --kubeconfig ({@link #local}), or an
 * external infra cluster through a kubeconfig already checked ({@link #open}). A watch client (no
 * read timeout), a request client (each request bounded in time), and the writers of the Events on
 * its VMIs (threads of its own: a slow API server delays only its own events).
 */
final class InfraConnection implements AutoCloseable {

  /** Never its kubeconfig's content. */
  final String name;

  final ApiClient watchClient;
  final ApiClient requestClient;
  final EventSeriesRecorder vmiEvents;

  private InfraConnection(
      String name, ApiClient watchClient, ApiClient requestClient, String writers, int lanes) {
    this.name = name;
    this.watchClient = watchClient;
    watchClient.setReadTimeout(0);
    this.requestClient = requestClient;
    requestClient.setReadTimeout(15_000);
    requestClient.setConnectTimeout(5_000);
    this.vmiEvents = events(requestClient, VmiEvents.OUTCOMES, writers, lanes);
  }

  static InfraConnection local(Path kubeconfig) throws IOException {
    return new InfraConnection(
        "the cluster of --kubeconfig", client(kubeconfig), client(kubeconfig), "vmi-events", 4);
  }

  /** --kubeconfig, else in-cluster, else $KUBECONFIG / ~/.kube/config. */
  private static ApiClient client(Path kubeconfig) throws IOException {
    if (kubeconfig != null) {
      try (Reader r = Files.newBufferedReader(kubeconfig, StandardCharsets.UTF_8)) {
        KubeConfig kc = KubeConfig.loadKubeConfig(r);
        kc.setFile(kubeconfig.toAbsolutePath().toFile());
        return CipherOrder.preferChaCha20(ClientBuilder.kubeconfig(kc).build());
      }
    }
    return CipherOrder.preferChaCha20(
        System.getenv("KUBERNETES_SERVICE_HOST") != null
            ? ClientBuilder.cluster().build()
            : ClientBuilder.standard().build());
  }

  /** An external infra cluster; IllegalArgumentException: no client (quoting no content). */
  static InfraConnection open(InfraBindings.Connection connection) {
    return new InfraConnection(
        connection.displayName(), client(connection), client(connection), "infra-vmi-events", 2);
  }

  private static ApiClient client(InfraBindings.Connection connection) {
    try {
      KubeConfig kc = KubeConfig.loadKubeConfig(new StringReader(connection.kubeconfig()));
      return CipherOrder.preferChaCha20(ClientBuilder.kubeconfig(kc).build());
    } catch (Exception e) {
      // The parser's and builder's messages may quote the content: name the failure kind only.
      throw new IllegalArgumentException(
          "kubeconfig unusable (" + e.getClass().getSimpleName() + ")");
    }
  }

  static EventSeriesRecorder events(
      ApiClient requests, Set<String> outcomes, String writers, int lanes) {
    return new EventSeriesRecorder(
        EventStore.of(new CoreV1Api(requests)),
        "capk-vmi-eviction-controller",
        outcomes,
        Clock.systemUTC(),
        writers,
        lanes);
  }

  @Override
  public void close() {
    vmiEvents.close();
  }
}
