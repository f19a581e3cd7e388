package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.common.base.Ticker;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.extended.event.EventType;
import io.kubernetes.client.extended.event.legacy.EventRecorder;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What reaches client-java's recorder, whose spam filter drops an object's events beyond 25. */
class RecorderVmiEventsTest {

  final List<String> sent = new ArrayList<>();
  final AtomicLong nanos = new AtomicLong();
  final RecorderVmiEvents events = new RecorderVmiEvents(new Capturing(), new Ticker() {
    @Override
    public long read() {
      return nanos.get();
    }
  });

  @Test
  void aDrainBlockedForTheWholeTimeoutLeavesRoomForTheDeadlineWarningAndTheDeletion() {
    var vmi = TestVmis.vmi("vm-1", "External", "infra-1");
    events.normal(vmi, EventReasons.DRAIN_STARTED, "started");
    // Ten minutes of passes 20 s apart, each blocked by the same budget.
    for (int pass = 0; pass < 30; pass++) {
      events.warning(vmi, EventReasons.DRAIN_BLOCKED, "Guest node vm-1 not drained yet (1 pod(s) left): ns/db-pdb");
      nanos.addAndGet(20_000_000_000L);
    }
    events.warning(vmi, EventReasons.DEADLINE_PASSED, "deleting anyway");
    events.normal(vmi, EventReasons.VMI_DELETED, "deleted");

    long blocked = sent.stream().filter(s -> s.startsWith("Warning " + EventReasons.DRAIN_BLOCKED)).count();
    assertEquals(2, blocked, "one per 5 minutes: " + sent);
    assertEquals(List.of("Normal DrainStarted", "Warning DrainBlocked", "Warning DrainBlocked",
        "Warning DrainDeadlinePassed", "Normal VMIDeleted"), sent.stream().map(s -> s.substring(0, s.indexOf(':'))).toList());
    assertTrue(sent.size() < 25);
  }

  @Test
  void aChangedMessageOrAnotherVmiIsSentAtOnce() {
    var a = TestVmis.vmi("vm-a", "External", "infra-1");
    var b = TestVmis.vmi("vm-b", "External", "infra-1");
    events.warning(a, EventReasons.DRAIN_BLOCKED, "3 pod(s) left");
    events.warning(a, EventReasons.DRAIN_BLOCKED, "2 pod(s) left");
    events.warning(b, EventReasons.DRAIN_BLOCKED, "3 pod(s) left");
    assertEquals(3, sent.size(), sent.toString());
  }

  static void assertTrue(boolean b) {
    org.junit.jupiter.api.Assertions.assertTrue(b);
  }

  final class Capturing implements EventRecorder {
    @Override
    public void event(KubernetesObject o, EventType type, String reason, String format, String... args) {
      sent.add(type + " " + reason + ": " + String.format(format, (Object[]) args));
    }

    @Override
    public void event(KubernetesObject o, Map<String, String> annotations, EventType type, String reason, String format,
        String... args) {
      event(o, type, reason, format, args);
    }

    @Override
    public void event(V1ObjectReference ref, EventType type, String reason, String format, String... args) {
      sent.add(type + " " + reason + ": " + String.format(format, (Object[]) args));
    }

    @Override
    public void event(V1ObjectReference ref, Map<String, String> annotations, EventType type, String reason,
        String format, String... args) {
      event(ref, type, reason, format, args);
    }
  }
}
