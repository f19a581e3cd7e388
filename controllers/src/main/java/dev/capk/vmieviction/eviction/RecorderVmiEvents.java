package dev.capk.vmieviction.eviction;

import com.google.common.base.Ticker;
import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.extended.event.EventType;
import io.kubernetes.client.extended.event.legacy.EventRecorder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * VMI events through client-java's legacy (core/v1) event recorder, which also aggregates repeats.
 *
 * <p>The recorder drops every event of an object beyond 25, refilling one per 5 minutes (its spam
 * filter, as client-go's). A drain blocked for minutes repeats the same warning at each pass: sent
 * every time, those repeats would use up the allowance, and the events that matter most (the
 * deadline warning, the deletion) would be lost. So an event identical to one sent for the same VMI
 * within {@link #REPEAT_INTERVAL} is not sent again; the log still has every pass.
 */
public final class RecorderVmiEvents implements VmiEvents {

  /** The API server refuses event messages longer than this. */
  static final int MAX_MESSAGE = 1024;

  /** The spam filter's refill period: one identical event per period never drains the allowance. */
  static final Duration REPEAT_INTERVAL = Duration.ofMinutes(5);

  private final EventRecorder recorder;
  private final Cache<String, Boolean> recent;

  public RecorderVmiEvents(EventRecorder recorder) {
    this(recorder, Ticker.systemTicker());
  }

  RecorderVmiEvents(EventRecorder recorder, Ticker ticker) {
    this.recorder = recorder;
    this.recent =
        CacheBuilder.newBuilder()
            .maximumSize(100_000)
            .expireAfterWrite(REPEAT_INTERVAL.toMillis(), TimeUnit.MILLISECONDS)
            .ticker(ticker)
            .build();
  }

  @Override
  public void normal(VirtualMachineInstance vmi, String reason, String message) {
    send(vmi, EventType.Normal, reason, truncate(message));
  }

  @Override
  public void warning(VirtualMachineInstance vmi, String reason, String message) {
    send(vmi, EventType.Warning, reason, truncate(message));
  }

  private void send(VirtualMachineInstance vmi, EventType type, String reason, String message) {
    String uid = vmi.getMetadata() == null ? null : vmi.getMetadata().getUid();
    String key = uid + "\n" + type + "\n" + reason + "\n" + message;
    if (recent.asMap().putIfAbsent(key, Boolean.TRUE) != null) {
      return; // the same thing was said about this VMI a moment ago
    }
    // The recorder formats its message with String.format: pass ours as an argument, never as format.
    recorder.event(vmi, type, reason, "%s", message);
  }

  static String truncate(String message) {
    return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...";
  }
}
