package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.Map;
import java.util.Set;

/**
 * VMI events as series: one Event object per VMI, evacuation and reason, updated on repeats, at
 * most {@link dev.capk.vmieviction.events.EventSeriesBook#MAX_SERIES_PER_SCOPE} non-outcome series
 * per evacuation, and the outcomes ({@link #OUTCOMES}) always written.
 */
public final class SeriesVmiEvents implements VmiEvents {

  /** What an evacuation came to: never capped, never delayed. */
  public static final Set<String> OUTCOMES =
      Set.of(
          EventReasons.DRAIN_SUCCEEDED,
          EventReasons.VMI_DELETED,
          EventReasons.DEADLINE_PASSED,
          EventReasons.UNCORDONED);

  private final EventSeriesRecorder recorder;

  /** {@code recorder} must treat {@link #OUTCOMES} as its outcome reasons. */
  public SeriesVmiEvents(EventSeriesRecorder recorder) {
    this.recorder = recorder;
  }

  @Override
  public void normal(VirtualMachineInstance vmi, String reason, String message) {
    recorder.record(reference(vmi), evacuation(vmi), false, reason, message);
  }

  @Override
  public void warning(VirtualMachineInstance vmi, String reason, String message) {
    recorder.record(reference(vmi), evacuation(vmi), true, reason, message);
  }

  private static V1ObjectReference reference(VirtualMachineInstance vmi) {
    V1ObjectMeta meta = vmi.getMetadata();
    return new V1ObjectReference()
        .apiVersion(vmi.getApiVersion() == null ? "kubevirt.io/v1" : vmi.getApiVersion())
        .kind(vmi.getKind() == null ? "VirtualMachineInstance" : vmi.getKind())
        .namespace(meta.getNamespace())
        .name(meta.getName())
        .uid(meta.getUid())
        .resourceVersion(meta.getResourceVersion());
  }

  /**
   * An evacuation is known by its recorded start: a later evacuation of the same VMI starts new
   * series.
   */
  private static String evacuation(VirtualMachineInstance vmi) {
    Map<String, String> annotations = vmi.getMetadata().getAnnotations();
    String start =
        annotations == null ? null : annotations.get(EvictionAnnotations.DRAIN_START_TIME);
    return start == null ? "" : start;
  }
}
