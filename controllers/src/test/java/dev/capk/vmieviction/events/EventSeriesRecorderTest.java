package dev.capk.vmieviction.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.base.Ticker;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Series as the API sees them, through an in-memory {@link EventStore}. */
class EventSeriesRecorderTest {

  final AtomicLong nanos = new AtomicLong();
  final InMemoryStore store = new InMemoryStore();
  final EventSeriesRecorder recorder =
      recorder(
          new Ticker() {
            @Override
            public long read() {
              return nanos.get();
            }
          });

  final V1ObjectReference vmi =
      new V1ObjectReference()
          .apiVersion("kubevirt.io/v1")
          .kind("VirtualMachineInstance")
          .namespace("tenants")
          .name("vm-1")
          .uid("uid-1");

  EventSeriesRecorder recorder(Ticker ticker) {
    return new EventSeriesRecorder(
        store,
        "test",
        Set.of("DrainSucceeded", "VMIDeleted"),
        Clock.fixed(Instant.parse("2025-01-01T12:00:00Z"), ZoneOffset.UTC),
        java.util.List.of(MoreExecutors.newDirectExecutorService()),
        ticker);
  }

  @Test
  void aDrainBlockedWithEverChangingMessagesIsOneSeriesAndEveryOutcomeIsWritten() {
    recorder.record(vmi, "start-1", false, "DrainStarted", "started");
    for (int pass = 1; pass <= 100; pass++) {
      recorder.record(
          vmi,
          "start-1",
          true,
          "DrainBlocked",
          "pod p-" + pass + " refused by \"pdb-" + pass + "\"");
      nanos.addAndGet(Duration.ofSeconds(2).toNanos());
    }
    recorder.record(vmi, "start-1", false, "DrainSucceeded", "drained");
    recorder.record(vmi, "start-1", false, "VMIDeleted", "deleted");

    assertEquals(
        Set.of("DrainStarted", "DrainBlocked", "DrainSucceeded", "VMIDeleted"),
        store.reasons(),
        "one object per reason, not one per message: " + store.events.keySet());
    CoreV1Event blocked = store.byReason("DrainBlocked");
    assertTrue(blocked.getCount() > 90, "count of the series: " + blocked.getCount());
    assertTrue(blocked.getMessage().startsWith("pod p-"), blocked.getMessage());
    assertTrue(
        store.writes < 20, "repeats are written at most every 30 s: " + store.writes + " writes");
  }

  @Test
  void aSeriesOfAnEarlierRunIsAddedToNotDuplicated() {
    recorder.record(vmi, "start-1", true, "DrainBlocked", "blocked");
    store.byReason("DrainBlocked").setCount(5);
    // A restarted controller: fresh series, the same objects in the API.
    EventSeriesRecorder restarted = recorder(Ticker.systemTicker());
    restarted.record(vmi, "start-1", true, "DrainBlocked", "blocked again");
    assertEquals(1, store.events.size());
    assertEquals(6, store.byReason("DrainBlocked").getCount());
    assertEquals("blocked again", store.byReason("DrainBlocked").getMessage());
  }

  @Test
  void aSeriesWhoseObjectExpiredIsCreatedAgain() {
    recorder.record(vmi, "start-1", true, "DrainBlocked", "blocked");
    store.events.clear();
    nanos.addAndGet(Duration.ofMinutes(1).toNanos());
    recorder.record(vmi, "start-1", true, "DrainBlocked", "still blocked");
    assertEquals(2, store.byReason("DrainBlocked").getCount());
  }

  @Test
  void aFailingApiNeverThrowsAndTheOutcomeIsWrittenWhenItRecurs() {
    store.failing = true;
    recorder.record(vmi, "start-1", false, "VMIDeleted", "deleted");
    store.failing = false;
    recorder.record(vmi, "start-1", false, "VMIDeleted", "deleted");
    assertEquals(2, store.byReason("VMIDeleted").getCount());
  }

  @Test
  void eventMessagesAreCutToTheApiLimit() {
    recorder.record(vmi, "start-1", true, "DrainBlocked", "x".repeat(5000));
    String message = store.byReason("DrainBlocked").getMessage();
    assertEquals(EventSeriesRecorder.MAX_MESSAGE, message.length());
    assertTrue(message.endsWith("..."), message);
  }

  @Test
  void updatesAreJsonWithTheMessageEscaped() {
    JsonObject patch =
        JsonParser.parseString(
                EventSeriesRecorder.updatePatch(
                    "pdb \"a\\b\"\n",
                    3,
                    Instant.parse("2025-01-01T12:00:00Z").atOffset(ZoneOffset.UTC)))
            .getAsJsonObject();
    assertEquals("pdb \"a\\b\"\n", patch.get("message").getAsString());
    assertEquals(3, patch.get("count").getAsInt());
    assertEquals("2025-01-01T12:00:00Z", patch.get("lastTimestamp").getAsString());
    assertEquals(3, patch.size(), "only the fields an update changes");
  }

  /** Events by name, answering 409 and 404 as the API server does. */
  static final class InMemoryStore implements EventStore {
    final Map<String, CoreV1Event> events = new LinkedHashMap<>();
    boolean failing;
    int writes;

    @Override
    public void create(CoreV1Event event) throws ApiException {
      fail();
      if (events.containsKey(event.getMetadata().getName())) {
        throw new ApiException(409, "AlreadyExists");
      }
      writes++;
      events.put(event.getMetadata().getName(), event);
    }

    @Override
    public void mergePatch(String namespace, String name, String patch) throws ApiException {
      fail();
      CoreV1Event e = events.get(name);
      if (e == null) {
        throw new ApiException(404, "NotFound");
      }
      writes++;
      JsonObject p = JsonParser.parseString(patch).getAsJsonObject();
      e.setCount(p.get("count").getAsInt());
      e.setMessage(p.get("message").getAsString());
    }

    @Override
    public CoreV1Event read(String namespace, String name) throws ApiException {
      fail();
      CoreV1Event e = events.get(name);
      if (e == null) {
        throw new ApiException(404, "NotFound");
      }
      return e;
    }

    @Override
    public String describe(Exception e) {
      return e.getClass().getSimpleName();
    }

    private void fail() throws ApiException {
      if (failing) {
        throw new ApiException(503, "unavailable");
      }
    }

    Set<String> reasons() {
      return events.values().stream()
          .map(CoreV1Event::getReason)
          .collect(java.util.stream.Collectors.toCollection(java.util.LinkedHashSet::new));
    }

    CoreV1Event byReason(String reason) {
      return events.values().stream()
          .filter(e -> reason.equals(e.getReason()))
          .findFirst()
          .orElseThrow();
    }
  }
}
