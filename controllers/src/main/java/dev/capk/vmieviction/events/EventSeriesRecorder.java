package dev.capk.vmieviction.events;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;

import com.google.common.base.Ticker;
import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import com.google.common.hash.Hashing;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.gson.Gson;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1EventSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes core/v1 Events as series: best effort, one attempt, never throws (the series' next
 * occurrence retries). A series is one (object, scope, type, reason), a scope one evacuation of a
 * VMI (or one guest node). Per scope: outcome reasons are written at every occurrence; at most
 * {@link #MAX_SERIES_PER_SCOPE} other series (a further reason is dropped, the log has it); a first
 * occurrence is written at once; repeats update the API at most once per {@link #UPDATE_INTERVAL}
 * for the whole scope (a blocked evacuation costs at most one Event write a minute), those in
 * between counted into the next. Series names derive from their key, so a restarted controller
 * finds its series again.
 *
 * <p>Given lanes, writes off the caller's thread, as client-go's broadcaster does (under load the
 * round trips cost a step more than its real work): an object's events all go to one lane, in order
 * (so no two writes of a series race); a full lane drops the event, logged. Not client-java's
 * {@code LegacyEventBroadcaster}: its spam filter drops an object's events beyond 25 (outcomes
 * too), it creates a combined event twice (a 409 logged as ERROR), and its update patch embeds the
 * message unescaped.
 */
public final class EventSeriesRecorder implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(EventSeriesRecorder.class);

  /** Series of non-outcome reasons per scope. */
  public static final int MAX_SERIES_PER_SCOPE = 10;

  /** Repeats in a scope (all its series together) update the API at most this often. */
  public static final Duration UPDATE_INTERVAL = Duration.ofMinutes(1);

  /** The API server refuses event messages longer than this. */
  static final int MAX_MESSAGE = 1024;

  /** One series: an event of {@code reason} and {@code type} about one object in one scope. */
  record Series(String objectName, String objectUid, String scope, String type, String reason) {

    /** A valid, stable Event name: the object's name, a dot, the key's SHA-256 (8 bytes, hex). */
    String eventName() {
      String prefix = objectName.length() > 200 ? objectName.substring(0, 200) : objectName;
      String key = objectUid + "\n" + scope + "\n" + type + "\n" + reason;
      return prefix + "." + Hashing.sha256().hashString(key, UTF_8).toString().substring(0, 16);
    }
  }

  /** What an occurrence does: create, update, fold into the next update, or drop (capped). */
  enum Write {
    CREATE,
    UPDATE,
    FOLD,
    CAPPED
  }

  /** A decision and the count it writes. */
  record Decision(Write write, int count) {}

  private static final class SeriesState {
    int occurred;
    int written; // 0: no object known to exist
    long writtenAtNanos;
  }

  private static final class Scope {
    final Map<Series, SeriesState> series = new HashMap<>();
    int capped; // non-outcome series admitted
    long repeatDueAtNanos = Long.MIN_VALUE; // when a repeat of any non-outcome series may update
  }

  private final Cache<String, Scope> scopes; // guarded by itself
  private final Ticker ticker;
  private final EventStore store;
  private final String component;
  private final Set<String> outcomeReasons;
  private final Clock clock;
  private final List<ExecutorService> lanes;

  /**
   * @param outcomeReasons never capped nor delayed
   * @param writers the lanes' thread name prefix
   * @param lanes events written at once, off the caller's thread; 0: on the caller's thread
   */
  public EventSeriesRecorder(
      EventStore store,
      String component,
      Set<String> outcomeReasons,
      Clock clock,
      String writers,
      int lanes) {
    this(store, component, outcomeReasons, clock, lanes(writers, lanes), Ticker.systemTicker());
  }

  EventSeriesRecorder(
      EventStore store,
      String component,
      Set<String> outcomeReasons,
      Clock clock,
      List<ExecutorService> lanes,
      Ticker ticker) {
    this.scopes =
        CacheBuilder.newBuilder()
            .maximumSize(50_000)
            // Longer than the API server's default event TTL (1 h): the object is gone by then.
            .expireAfterAccess(Duration.ofMinutes(70))
            .ticker(ticker)
            .build();
    this.ticker = ticker;
    this.store = store;
    this.component = component;
    this.outcomeReasons = Set.copyOf(outcomeReasons);
    this.clock = clock;
    this.lanes = lanes;
  }

  /** One thread per lane, virtual: an idle lane holds no platform thread. */
  private static List<ExecutorService> lanes(String name, int count) {
    if (count == 0) {
      return List.of(MoreExecutors.newDirectExecutorService());
    }
    ThreadFactory threads = Thread.ofVirtual().name(name + "-", 0).factory();
    return Stream.<ExecutorService>generate(
            () ->
                new ThreadPoolExecutor(1, 1, 0, SECONDS, new ArrayBlockingQueue<>(10_000), threads))
        .limit(count)
        .toList();
  }

  /** One occurrence; {@code scope} separates series of the same object, e.g. one evacuation. */
  public void record(
      V1ObjectReference involved, String scope, boolean warning, String reason, String message) {
    record(store, involved, scope, warning, reason, message);
  }

  /** The same, written through {@code store} (another cluster's). */
  public void record(
      EventStore store,
      V1ObjectReference involved,
      String scope,
      boolean warning,
      String reason,
      String message) {
    String type = warning ? "Warning" : "Normal";
    Series series =
        new Series(involved.getName(), String.valueOf(involved.getUid()), scope, type, reason);
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
            .message(
                message.length() <= MAX_MESSAGE
                    ? message
                    : message.substring(0, MAX_MESSAGE - 3) + "...")
            .source(new V1EventSource().component(component))
            .reportingComponent(component);
    // After every earlier write of the same object.
    String object = namespace + "/" + involved.getName();
    try {
      lanes
          .get(Math.floorMod((object + "/" + involved.getUid()).hashCode(), lanes.size()))
          .execute(() -> recordNow(store, series, event, object));
    } catch (RejectedExecutionException e) {
      log.info("event not recorded, its lane is full or closed object={}", object);
    }
  }

  private void recordNow(EventStore store, Series series, CoreV1Event event, String object) {
    try {
      Decision decision = occurred(series);
      switch (decision.write()) {
        case CREATE, UPDATE -> written(series, write(store, event, decision));
        case CAPPED ->
            log.debug(
                "event not recorded, series cap reached object={} reason={}",
                object,
                series.reason());
        case FOLD -> {} // counted, written with the next update
      }
    } catch (Exception e) {
      log.info(
          "event not recorded object={} kind={} reason={} error=\"{}\"",
          object,
          event.getInvolvedObject().getKind(),
          series.reason(),
          store.describe(e));
    }
  }

  /** Creates or updates the series' object; returns the count the API now holds. */
  private int write(EventStore store, CoreV1Event event, Decision decision) throws Exception {
    String namespace = event.getMetadata().getNamespace();
    String name = event.getMetadata().getName();
    OffsetDateTime now = clock.instant().truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC);
    int count = decision.count();
    if (decision.write() == Write.UPDATE) {
      try {
        store.mergePatch(namespace, name, updatePatch(event.getMessage(), count, now));
        return count;
      } catch (ApiException e) {
        if (e.getCode() != 404) {
          throw e;
        }
        // Expired (the API server keeps events for an hour) or deleted: create it again.
      }
    }
    try {
      store.create(event.firstTimestamp(now).lastTimestamp(now).count(count));
      return count;
    } catch (ApiException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      // Written by an earlier run of the controller (names are stable): add to its count.
      CoreV1Event existing = store.read(namespace, name);
      int total = (existing.getCount() == null ? 1 : existing.getCount()) + count;
      store.mergePatch(namespace, name, updatePatch(event.getMessage(), total, now));
      return total;
    }
  }

  /** What an occurrence does to the API (no I/O). */
  Decision occurred(Series series) {
    boolean outcome = outcomeReasons.contains(series.reason());
    synchronized (scopes) {
      Scope scope = scope(series);
      SeriesState state = scope.series.get(series);
      if (state == null) {
        if (!outcome) {
          if (scope.capped >= MAX_SERIES_PER_SCOPE) {
            return new Decision(Write.CAPPED, 0);
          }
          scope.capped++;
        }
        scope.series.put(series, state = new SeriesState());
      }
      state.occurred++;
      if (state.written == 0) {
        return new Decision(Write.CREATE, state.occurred);
      }
      long now = ticker.read();
      boolean due =
          outcome
              || now - state.writtenAtNanos >= UPDATE_INTERVAL.toNanos()
                  && now >= scope.repeatDueAtNanos;
      return new Decision(due ? Write.UPDATE : Write.FOLD, state.occurred);
    }
  }

  /** The API now holds {@code count} for the series (more if an earlier run's was added to). */
  void written(Series series, int count) {
    synchronized (scopes) {
      Scope scope = scope(series);
      SeriesState state = scope.series.computeIfAbsent(series, s -> new SeriesState());
      long now = ticker.read();
      if (state.written > 0 && !outcomeReasons.contains(series.reason())) {
        // A repeat went out: the scope's slot for the interval is used (an object's events are
        // written one at a time, so two series do not race for it).
        scope.repeatDueAtNanos = now + UPDATE_INTERVAL.toNanos();
      }
      state.occurred = Math.max(state.occurred, count);
      state.written = count;
      state.writtenAtNanos = now;
    }
  }

  private Scope scope(Series series) {
    return scopes
        .asMap()
        .computeIfAbsent(series.objectUid() + "\n" + series.scope(), k -> new Scope());
  }

  /** Exactly the fields an update changes, JSON-escaped by Gson. */
  static String updatePatch(String message, int count, OffsetDateTime now) {
    return new Gson()
        .toJson(
            Map.of(
                "count", count, "message", message, "lastTimestamp", now.toInstant().toString()));
  }

  /** Writes what is waiting for about two seconds, then interrupts the lanes: back within four. */
  @Override
  public void close() {
    lanes.forEach(ExecutorService::shutdown);
    // Guava waits half the time given, then stops the lane and waits the other half.
    long until = System.nanoTime() + SECONDS.toNanos(4);
    lanes.forEach(
        l -> MoreExecutors.shutdownAndAwaitTermination(l, until - System.nanoTime(), NANOSECONDS));
  }
}
