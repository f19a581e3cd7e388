package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.Set;

/**
 * VMI events as series: one Event object per VMI, evacuation and reason, updated on repeats, at
 * most {@link dev.capk.vmieviction.events.EventSeriesRecorder#MAX_SERIES_PER_SCOPE} non-outcome
 * series per evacuation, and the outcomes ({@link #OUTCOMES}) always written.
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
  public void record(VirtualMachineInstance vmi, boolean warning, String reason, String message) {
    recorder.record(reference(vmi), VmiEvents.evacuation(vmi), warning, reason, message);
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
}
