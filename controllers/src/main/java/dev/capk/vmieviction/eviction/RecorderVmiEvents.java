package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.extended.event.EventType;
import io.kubernetes.client.extended.event.legacy.EventRecorder;

/** VMI events through client-java's legacy (core/v1) event recorder, which also aggregates repeats. */
public final class RecorderVmiEvents implements VmiEvents {

  /** The API server refuses event messages longer than this. */
  static final int MAX_MESSAGE = 1024;

  private final EventRecorder recorder;

  public RecorderVmiEvents(EventRecorder recorder) {
    this.recorder = recorder;
  }

  @Override
  public void normal(VirtualMachineInstance vmi, String reason, String message) {
    // The recorder formats its message with String.format: pass ours as an argument, never as format.
    recorder.event(vmi, EventType.Normal, reason, "%s", truncate(message));
  }

  @Override
  public void warning(VirtualMachineInstance vmi, String reason, String message) {
    recorder.event(vmi, EventType.Warning, reason, "%s", truncate(message));
  }

  static String truncate(String message) {
    return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...";
  }
}
