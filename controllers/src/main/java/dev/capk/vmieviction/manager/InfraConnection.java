package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.eviction.VmiEvents;
import dev.capk.vmieviction.infra.InfraBindings;
import dev.capk.vmieviction.kube.CipherOrder;
import dev.capk.vmieviction.kube.ClientCertificates;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.util.Config;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.StringReader;
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
    return CipherOrder.preferChaCha20(
        kubeconfig != null
            ? ClientCertificates.builder(kubeconfig).build()
            : System.getenv("KUBERNETES_SERVICE_HOST") != null
                ? Config.fromCluster()
                : Config.defaultClient());
  }

  /** An external infra cluster; IllegalArgumentException: no client (quoting no content). */
  static InfraConnection open(InfraBindings.Connection connection) {
    return new InfraConnection(
        connection.displayName(), client(connection), client(connection), "infra-vmi-events", 2);
  }

  private static ApiClient client(InfraBindings.Connection connection) {
    try {
      return CipherOrder.preferChaCha20(
          ClientCertificates.builder(
                  KubeConfig.loadKubeConfig(new StringReader(connection.kubeconfig())))
              .build());
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
