package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.KubeCluster;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.time.Duration;
import java.util.Set;

/**
 * Records, from a watch on a guest cluster's nodes, every node ever seen cordoned: what the tests
 * of live migration check, since a migrated VMI's guest node must never be cordoned at all.
 */
public final class CordonedNodes {
  private CordonedNodes() {}

  /**
   * Starts the watch; returns once it synced. Stop it with the factory's {@code
   * stopAllRegisteredInformers}.
   *
   * @param everCordoned receives the name of each node seen with {@code spec.unschedulable}
   */
  public static SharedInformerFactory watch(KubeCluster guest, Set<String> everCordoned) {
    ApiClient client = guest.informerClient();
    SharedInformerFactory factory = new SharedInformerFactory(client);
    SharedIndexInformer<V1Node> nodes =
        factory.sharedIndexInformerFor(
            new GenericKubernetesApi<>(V1Node.class, V1NodeList.class, "", "v1", "nodes", client),
            V1Node.class,
            0);
    nodes.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(V1Node n) {
            record(n, everCordoned);
          }

          @Override
          public void onUpdate(V1Node old, V1Node n) {
            record(n, everCordoned);
          }

          @Override
          public void onDelete(V1Node n, boolean unknown) {}
        });
    factory.startAllRegisteredInformers();
    Await.until("guest node watch synced", Duration.ofSeconds(30), nodes::hasSynced);
    return factory;
  }

  private static void record(V1Node n, Set<String> everCordoned) {
    if (n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable())) {
      everCordoned.add(n.getMetadata().getName());
    }
  }
}
