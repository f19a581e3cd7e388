package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventWriters;
import dev.capk.vmieviction.eviction.SeriesVmiEvents;
import dev.capk.vmieviction.infra.InfraBindings;
import dev.capk.vmieviction.kube.CipherOrder;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.StringReader;

/**
 * One external infra cluster, as reached with one kubeconfig (already checked by {@code
 * KubeconfigPolicy}): a watch client, a request client with time bounds, and the writers of the
 * Events on its VMIs (its own threads, so a slow infra API server delays only its own events).
 * Shared by every infra namespace watched through it.
 */
final class InfraConnection implements AutoCloseable {

  /** The kubeconfig could not be turned into a client; the message holds no content. */
  static final class Unusable extends Exception {
    Unusable(String message) {
      super(message, null, false, false);
    }
  }

  final InfraBindings.Connection connection;
  final ApiClient watchClient;
  final ApiClient requestClient;
  final EventSeriesRecorder vmiEvents;
  private final EventWriters eventWriters;

  private InfraConnection(
      InfraBindings.Connection connection, ApiClient watchClient, ApiClient requestClient) {
    this.connection = connection;
    this.watchClient = watchClient;
    this.requestClient = requestClient;
    this.eventWriters = new EventWriters("infra-vmi-events", 2, 10_000);
    this.vmiEvents = PipelineParts.events(requestClient, SeriesVmiEvents.OUTCOMES, eventWriters);
  }

  static InfraConnection open(InfraBindings.Connection connection) throws Unusable {
    ApiClient watch = PipelineParts.forWatches(client(connection));
    ApiClient requests = PipelineParts.forRequests(client(connection));
    return new InfraConnection(connection, watch, requests);
  }

  private static ApiClient client(InfraBindings.Connection connection) throws Unusable {
    try {
      KubeConfig kc = KubeConfig.loadKubeConfig(new StringReader(connection.kubeconfig()));
      return CipherOrder.preferChaCha20(ClientBuilder.kubeconfig(kc).build());
    } catch (Exception e) {
      // The parser's and builder's messages may quote the content: name the failure kind only.
      throw new Unusable("kubeconfig unusable (" + e.getClass().getSimpleName() + ")");
    }
  }

  @Override
  public void close() {
    eventWriters.close();
  }
}
