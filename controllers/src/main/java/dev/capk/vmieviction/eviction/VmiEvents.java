package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.kube.Metadata;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.Set;

/** Kubernetes Events on VMIs. Messages must never contain secrets. */
public interface VmiEvents {

  /** What an evacuation came to: never capped, never delayed. */
  Set<String> OUTCOMES =
      Set.of(
          EventReasons.DRAIN_SUCCEEDED,
          EventReasons.VMI_DELETED,
          EventReasons.DEADLINE_PASSED,
          EventReasons.UNCORDONED);

  /** One event: a Warning, else Normal. */
  void record(VirtualMachineInstance vmi, boolean warning, String reason, String message);

  default void normal(VirtualMachineInstance vmi, String reason, String message) {
    record(vmi, false, reason, message);
  }

  default void warning(VirtualMachineInstance vmi, String reason, String message) {
    record(vmi, true, reason, message);
  }

  /**
   * VMI events as series: one Event object per VMI, evacuation and reason, updated on repeats, at
   * most {@link dev.capk.vmieviction.events.EventSeriesBook#MAX_SERIES_PER_SCOPE} non-outcome
   * series per evacuation, and the {@link #OUTCOMES} (which {@code recorder} must treat as its
   * outcome reasons) always written.
   */
  static VmiEvents series(EventSeriesRecorder recorder) {
    return (vmi, warning, reason, message) -> {
      V1ObjectMeta meta = vmi.getMetadata();
      V1ObjectReference ref =
          new V1ObjectReference()
              .apiVersion(vmi.getApiVersion() == null ? "kubevirt.io/v1" : vmi.getApiVersion())
              .kind(vmi.getKind() == null ? "VirtualMachineInstance" : vmi.getKind())
              .namespace(meta.getNamespace())
              .name(meta.getName())
              .uid(meta.getUid())
              .resourceVersion(meta.getResourceVersion());
      recorder.record(ref, evacuation(vmi), warning, reason, message);
    };
  }

  /**
   * An evacuation is known by its recorded start: a later evacuation of the same VMI starts new
   * series.
   */
  static String evacuation(VirtualMachineInstance vmi) {
    String start = Metadata.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME);
    return start == null ? "" : start;
  }
}
