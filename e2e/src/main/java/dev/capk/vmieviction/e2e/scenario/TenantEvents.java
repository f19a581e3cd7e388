package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import java.time.Instant;
import java.util.List;

/** The Events of a tenant's namespace in the infra cluster, as the tests read them. */
public final class TenantEvents {
  private TenantEvents() {}

  public static List<CoreV1Event> of(KubeCluster infra, TenantCluster tenant) throws ApiException {
    return new CoreV1Api(infra.client())
        .listNamespacedEvent(tenant.namespace())
        .execute()
        .getItems();
  }

  /** When the event (its series) first happened, whichever of its time fields its writer set. */
  public static Instant firstTime(CoreV1Event e) {
    if (e.getFirstTimestamp() != null) {
      return e.getFirstTimestamp().toInstant();
    }
    if (e.getEventTime() != null) {
      return e.getEventTime().toInstant();
    }
    return e.getMetadata().getCreationTimestamp().toInstant();
  }
}
