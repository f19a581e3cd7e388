package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import io.kubernetes.client.extended.event.EventType;
import io.kubernetes.client.extended.event.legacy.EventRecorder;
import io.kubernetes.client.openapi.models.V1ObjectReference;

/**
 * Events through client-java's legacy (core/v1) recorder, which aggregates repeats. Both objects are
 * cluster-scoped, so the events land in namespace {@code default}, as the kubelet's node events do.
 */
public final class RecorderMaintenanceEvents implements MaintenanceEvents {
  /** The API server refuses event messages longer than this. */
  static final int MAX_MESSAGE = 1024;

  private final EventRecorder recorder;

  public RecorderMaintenanceEvents(EventRecorder recorder) {
    this.recorder = recorder;
  }

  @Override
  public void onMaintenance(NodeMaintenance nm, boolean warning, String reason, String message) {
    V1ObjectReference ref = new V1ObjectReference()
        .apiVersion(nm.getApiVersion()).kind(nm.getKind())
        .name(nm.getMetadata().getName()).uid(nm.getMetadata().getUid());
    // The recorder formats with String.format: pass the message as an argument, never as the format.
    recorder.event(ref, type(warning), reason, "%s", truncate(message));
  }

  @Override
  public void onNode(String nodeName, String nodeUid, boolean warning, String reason, String message) {
    V1ObjectReference ref = new V1ObjectReference().apiVersion("v1").kind("Node").name(nodeName).uid(nodeUid);
    recorder.event(ref, type(warning), reason, "%s", truncate(message));
  }

  private static EventType type(boolean warning) {
    return warning ? EventType.Warning : EventType.Normal;
  }

  static String truncate(String message) {
    return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...";
  }
}
