package dev.capk.vmieviction.events;

import com.google.gson.JsonObject;
import dev.capk.vmieviction.events.EventSeriesBook.Capped;
import dev.capk.vmieviction.events.EventSeriesBook.Create;
import dev.capk.vmieviction.events.EventSeriesBook.Decision;
import dev.capk.vmieviction.events.EventSeriesBook.Series;
import dev.capk.vmieviction.events.EventSeriesBook.Update;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1EventSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes core/v1 Events as series, as {@link EventSeriesBook} decides: best effort, one attempt,
 * never throws (the series' next occurrence retries); on the caller's thread or, given {@link
 * EventWriters}, on theirs. Not client-java's {@code LegacyEventBroadcaster}: its spam filter drops
 * an object's events beyond 25 (outcomes too), it creates a combined event twice (a 409 logged as
 * ERROR), and its update patch embeds the message unescaped.
 */
public final class EventSeriesRecorder {

  private static final Logger log = LoggerFactory.getLogger(EventSeriesRecorder.class);

  /** The API server refuses event messages longer than this. */
  public static final int MAX_MESSAGE = 1024;

  private final EventSeriesBook book;
  private final EventStore store;
  private final String component;
  private final Set<String> outcomeReasons;
  private final Clock clock;
  private final EventWriters writers;

  /**
   * {@code outcomeReasons}: never capped nor delayed; {@code writers} null: the caller's thread.
   */
  public EventSeriesRecorder(
      EventSeriesBook book,
      EventStore store,
      String component,
      Set<String> outcomeReasons,
      Clock clock,
      EventWriters writers) {
    this.book = book;
    this.store = store;
    this.component = component;
    this.outcomeReasons = Set.copyOf(outcomeReasons);
    this.clock = clock;
    this.writers = writers;
  }

  /** One occurrence; {@code scope} separates series of the same object, e.g. one evacuation. */
  public void record(
      V1ObjectReference involved, String scope, boolean warning, String reason, String message) {
    if (writers == null) {
      recordNow(involved, scope, warning, reason, message);
    } else {
      writers.submit(
          involved.getNamespace() + "/" + involved.getName() + "/" + involved.getUid(),
          () -> recordNow(involved, scope, warning, reason, message));
    }
  }

  private void recordNow(
      V1ObjectReference involved, String scope, boolean warning, String reason, String message) {
    String type = warning ? "Warning" : "Normal";
    Series series =
        new Series(involved.getName(), String.valueOf(involved.getUid()), scope, type, reason);
    Decision decision = book.occurred(series, outcomeReasons.contains(reason));
    String namespace =
        involved.getNamespace() == null || involved.getNamespace().isEmpty()
            ? "default" // cluster-scoped objects (Nodes): where the kubelet's events go
            : involved.getNamespace();
    CoreV1Event event =
        new CoreV1Event()
            .metadata(new V1ObjectMeta().name(series.eventName()).namespace(namespace))
            .involvedObject(involved)
            .type(type)
            .reason(reason)
            .message(truncate(message))
            .source(new V1EventSource().component(component))
            .reportingComponent(component);
    try {
      if (decision instanceof Create c) {
        create(series, event, c.count());
      } else if (decision instanceof Update u) {
        update(series, event, u.count());
      } else if (decision instanceof Capped) {
        log.debug(
            "event not recorded, series cap reached object={}/{} reason={}",
            namespace,
            involved.getName(),
            reason);
      }
      // Fold: counted, written with the next update.
    } catch (Exception e) {
      log.info(
          "event not recorded object={}/{} kind={} reason={} error=\"{}\"",
          namespace,
          involved.getName(),
          involved.getKind(),
          reason,
          store.describe(e));
    }
  }

  private void create(Series series, CoreV1Event event, int count) throws Exception {
    OffsetDateTime now = now();
    try {
      store.create(event.firstTimestamp(now).lastTimestamp(now).count(count));
      book.written(series, count);
    } catch (ApiException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      // Written by an earlier run of the controller (names are stable): add to its count.
      String namespace = event.getMetadata().getNamespace();
      CoreV1Event existing = store.read(namespace, series.eventName());
      int total = (existing.getCount() == null ? 1 : existing.getCount()) + count;
      store.mergePatch(namespace, series.eventName(), updatePatch(event.getMessage(), total, now));
      book.written(series, total);
    }
  }

  private void update(Series series, CoreV1Event event, int count) throws Exception {
    try {
      store.mergePatch(
          event.getMetadata().getNamespace(),
          series.eventName(),
          updatePatch(event.getMessage(), count, now()));
      book.written(series, count);
    } catch (ApiException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      // Expired (the API server keeps events for an hour) or deleted: start the object again.
      book.vanished(series);
      create(series, event, count);
    }
  }

  /** Exactly the fields an update changes, JSON-escaped by Gson. */
  static String updatePatch(String message, int count, OffsetDateTime now) {
    JsonObject patch = new JsonObject();
    patch.addProperty("count", count);
    patch.addProperty("message", message);
    patch.addProperty("lastTimestamp", now.toInstant().toString());
    return patch.toString();
  }

  private OffsetDateTime now() {
    return OffsetDateTime.ofInstant(
        clock.instant().truncatedTo(ChronoUnit.SECONDS), ZoneOffset.UTC);
  }

  public static String truncate(String message) {
    return message.length() <= MAX_MESSAGE
        ? message
        : message.substring(0, MAX_MESSAGE - 3) + "...";
  }
}
