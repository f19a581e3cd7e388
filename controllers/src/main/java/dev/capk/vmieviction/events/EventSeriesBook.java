package dev.capk.vmieviction.events;

import com.google.common.base.Ticker;
import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Decides, with no I/O, what each occurrence of an event does to the API: create its series' Event,
 * update its count and message, fold into the next update, or nothing (capped). A series is one
 * (object, scope, type, reason), a scope one evacuation of a VMI (or one guest node). Per scope:
 * outcome reasons are written at every occurrence; at most {@link #MAX_SERIES_PER_SCOPE} other
 * series (a further reason is dropped, the log has it); a first occurrence is written at once;
 * repeats update the API at most once per {@link #UPDATE_INTERVAL} for the whole scope (a blocked
 * evacuation costs at most one Event write a minute), those in between counted into the next.
 * Series names derive from their key, so a restarted controller finds its series again.
 */
public final class EventSeriesBook {

  /** Series of non-outcome reasons per scope. */
  public static final int MAX_SERIES_PER_SCOPE = 10;

  /** Repeats in a scope (all its series together) update the API at most this often. */
  public static final Duration UPDATE_INTERVAL = Duration.ofMinutes(1);

  /** Longer than the API server's default event TTL (1 h): the object is gone by then anyway. */
  static final Duration FORGET_AFTER = Duration.ofMinutes(70);

  /** One series: an event of {@code reason} and {@code type} about one object in one scope. */
  public record Series(
      String objectName, String objectUid, String scope, String type, String reason) {

    /** A valid, stable Event name: the object's name, a dot, a digest of the key. */
    public String eventName() {
      String prefix = objectName.length() > 200 ? objectName.substring(0, 200) : objectName;
      return prefix + "." + digest(objectUid + "\n" + scope + "\n" + type + "\n" + reason);
    }

    String scopeKey() {
      return objectUid + "\n" + scope;
    }
  }

  /** What to do with an occurrence: create, update, fold into the next update, or drop. */
  public sealed interface Decision {}

  public record Create(int count) implements Decision {}

  public record Update(int count) implements Decision {}

  public record Fold(int count) implements Decision {}

  public record Capped() implements Decision {}

  private static final class SeriesState {
    boolean outcome;
    int occurred;
    int written; // 0: no object known to exist
    long writtenAtNanos;
  }

  private static final class Scope {
    final Map<Series, SeriesState> series = new HashMap<>();
    int capped; // non-outcome series admitted
    long repeatWrittenAtNanos; // the last update of a repeat of any non-outcome series
    boolean repeatWritten;
  }

  private final Cache<String, Scope> scopes;
  private final Ticker ticker;
  private final Duration updateInterval;
  private final int maxSeries;

  public EventSeriesBook() {
    this(Ticker.systemTicker(), UPDATE_INTERVAL, MAX_SERIES_PER_SCOPE);
  }

  EventSeriesBook(Ticker ticker, Duration updateInterval, int maxSeries) {
    this.ticker = ticker;
    this.updateInterval = updateInterval;
    this.maxSeries = maxSeries;
    this.scopes =
        CacheBuilder.newBuilder()
            .maximumSize(50_000)
            .expireAfterAccess(FORGET_AFTER.toNanos(), TimeUnit.NANOSECONDS)
            .ticker(ticker)
            .build();
  }

  public synchronized Decision occurred(Series series, boolean outcome) {
    Scope scope = scope(series);
    SeriesState state = scope.series.get(series);
    if (state == null) {
      if (!outcome) {
        if (scope.capped >= maxSeries) {
          return new Capped();
        }
        scope.capped++;
      }
      state = new SeriesState();
      state.outcome = outcome;
      scope.series.put(series, state);
    }
    state.occurred++;
    if (state.written == 0) {
      return new Create(state.occurred);
    }
    if (outcome) {
      return new Update(state.occurred);
    }
    long now = ticker.read();
    boolean seriesDue = now - state.writtenAtNanos >= updateInterval.toNanos();
    boolean scopeDue =
        !scope.repeatWritten || now - scope.repeatWrittenAtNanos >= updateInterval.toNanos();
    if (seriesDue && scopeDue) {
      return new Update(state.occurred);
    }
    return new Fold(state.occurred);
  }

  /** The API now holds {@code count} for the series (more if an earlier run's was added to). */
  public synchronized void written(Series series, int count) {
    Scope scope = scope(series);
    SeriesState state = scope.series.computeIfAbsent(series, s -> new SeriesState());
    long now = ticker.read();
    if (state.written > 0 && !state.outcome) {
      // A repeat went out: the scope's slot for the interval is used (an object's events are
      // written one at a time, so two series do not race for it).
      scope.repeatWritten = true;
      scope.repeatWrittenAtNanos = now;
    }
    state.occurred = Math.max(state.occurred, count);
    state.written = count;
    state.writtenAtNanos = now;
  }

  /** The series' object is gone (expired or deleted): the next occurrence creates it again. */
  public synchronized void vanished(Series series) {
    SeriesState state = scope(series).series.get(series);
    if (state != null) {
      state.written = 0;
    }
  }

  private Scope scope(Series series) {
    try {
      return scopes.get(series.scopeKey(), Scope::new);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  static String digest(String key) {
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(hash, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
