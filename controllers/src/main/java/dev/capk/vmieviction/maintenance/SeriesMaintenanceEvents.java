package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.Set;

/**
 * NodeMaintenance and Node events as series, the same way as VMI events: one Event object per
 * object and reason, updated on repeats, the steps of a maintenance's life always written. Both
 * objects are cluster-scoped, so the events land in namespace {@code default}, as the kubelet's
 * node events do.
 */
public final class SeriesMaintenanceEvents implements MaintenanceEvents {

  /** The steps of a maintenance: each happens once, and none may be lost to a cap or a delay. */
  public static final Set<String> OUTCOMES =
      Set.of(
          MaintenanceEventReasons.BEGIN_MAINTENANCE,
          MaintenanceEventReasons.CORDON_NODE,
          MaintenanceEventReasons.SUCCEED_MAINTENANCE,
          MaintenanceEventReasons.FAILED_MAINTENANCE,
          MaintenanceEventReasons.UNCORDON_NODE,
          MaintenanceEventReasons.REMOVED_MAINTENANCE);

  private final EventSeriesRecorder recorder;

  /** {@code recorder} must treat {@link #OUTCOMES} as its outcome reasons. */
  public SeriesMaintenanceEvents(EventSeriesRecorder recorder) {
    this.recorder = recorder;
  }

  @Override
  public void onMaintenance(NodeMaintenance nm, boolean warning, String reason, String message) {
    V1ObjectReference ref =
        new V1ObjectReference()
            .apiVersion(nm.getApiVersion())
            .kind(nm.getKind())
            .name(nm.getMetadata().getName())
            .uid(nm.getMetadata().getUid());
    recorder.record(ref, "", warning, reason, message);
  }

  @Override
  public void onNode(
      String nodeName, String nodeUid, boolean warning, String reason, String message) {
    V1ObjectReference ref =
        new V1ObjectReference().apiVersion("v1").kind("Node").name(nodeName).uid(nodeUid);
    recorder.record(ref, "", warning, reason, message);
  }
}
