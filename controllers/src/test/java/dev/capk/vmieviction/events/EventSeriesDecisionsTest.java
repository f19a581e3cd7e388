package dev.capk.vmieviction.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.base.Ticker;
import com.google.common.util.concurrent.MoreExecutors;
import dev.capk.vmieviction.events.EventSeriesRecorder.Decision;
import dev.capk.vmieviction.events.EventSeriesRecorder.Series;
import dev.capk.vmieviction.events.EventSeriesRecorder.Write;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What each occurrence of an event does, as a table of occurrences and the decisions they get. */
class EventSeriesDecisionsTest {

  static final Duration INTERVAL = EventSeriesRecorder.UPDATE_INTERVAL;
  static final int CAP = EventSeriesRecorder.MAX_SERIES_PER_SCOPE;

  final AtomicLong nanos = new AtomicLong();
  final EventSeriesRecorder book =
      new EventSeriesRecorder(
          null,
          "test",
          Set.of("DrainSucceeded", "VMIDeleted"),
          Clock.systemUTC(),
          List.of(MoreExecutors.newDirectExecutorService()),
          new Ticker() {
            @Override
            public long read() {
              return nanos.get();
            }
          });

  static Decision create(int count) {
    return new Decision(Write.CREATE, count);
  }

  static Decision update(int count) {
    return new Decision(Write.UPDATE, count);
  }

  static Decision fold(int count) {
    return new Decision(Write.FOLD, count);
  }

  static Decision capped() {
    return new Decision(Write.CAPPED, 0);
  }

  /** An occurrence: after {@code afterSeconds}, {@code reason} in {@code scope}. */
  record Occurrence(int afterSeconds, String scope, String reason) {}

  static Occurrence at(int afterSeconds, String reason) {
    return new Occurrence(afterSeconds, "evacuation-1", reason);
  }

  /** An occurrence of an outcome reason (the book's: DrainSucceeded, VMIDeleted). */
  static Occurrence outcome(int afterSeconds, String reason) {
    return at(afterSeconds, reason);
  }

  static Occurrence in(String scope, String reason) {
    return new Occurrence(0, scope, reason);
  }

  /** The cap's series S1..S10 of evacuation-1 first (each created), then {@code then}. */
  static List<Occurrence> capFilled(Occurrence... then) {
    List<Occurrence> all = new ArrayList<>();
    for (int i = 1; i <= CAP; i++) {
      all.add(at(0, "S" + i));
    }
    all.addAll(List.of(then));
    return all;
  }

  static List<Decision> capFilled(Decision... then) {
    List<Decision> all = new ArrayList<>(java.util.Collections.nCopies(CAP, create(1)));
    all.addAll(List.of(then));
    return all;
  }

  static Stream<Arguments> table() {
    return Stream.of(
        Arguments.of(
            "the first occurrence creates the series",
            List.of(at(0, "DrainBlocked")),
            List.of(create(1))),
        Arguments.of(
            "repeats within the interval are counted and go out with the next update",
            List.of(
                at(0, "DrainBlocked"),
                at(1, "DrainBlocked"),
                at(1, "DrainBlocked"),
                at(60, "DrainBlocked"),
                at(1, "DrainBlocked")),
            List.of(create(1), fold(2), fold(3), update(4), fold(5))),
        Arguments.of(
            "repeats of all the scope's series together update at most once per interval",
            List.of(
                at(0, "DrainBlocked"),
                at(0, "GuestAPIUnavailable"),
                at(60, "DrainBlocked"),
                at(0, "GuestAPIUnavailable"),
                at(59, "GuestAPIUnavailable"),
                at(1, "GuestAPIUnavailable"),
                at(0, "DrainBlocked")),
            List.of(create(1), create(1), update(2), fold(2), fold(3), update(4), fold(3))),
        Arguments.of(
            "non-outcome series beyond the cap are dropped, their repeats too; earlier series still update",
            capFilled(at(0, "D"), at(120, "D"), at(0, "S1")),
            capFilled(capped(), capped(), update(2))),
        Arguments.of(
            "outcomes are written past the cap, and every repeat at once",
            capFilled(
                outcome(0, "DrainSucceeded"), outcome(0, "VMIDeleted"), outcome(1, "VMIDeleted")),
            capFilled(create(1), create(1), update(2))),
        Arguments.of(
            "another evacuation has its own series and its own cap",
            capFilled(
                in("evacuation-1", "DrainBlocked"),
                in("evacuation-2", "DrainBlocked"),
                in("evacuation-2", "DrainBlocked")),
            capFilled(capped(), create(1), fold(2))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void eachOccurrenceGetsItsDecision(
      String behaviour, List<Occurrence> occurrences, List<Decision> expected) {
    List<Decision> got = new ArrayList<>();
    for (Occurrence o : occurrences) {
      nanos.addAndGet(Duration.ofSeconds(o.afterSeconds()).toNanos());
      Series s = series(o.scope(), o.reason());
      Decision d = book.occurred(s);
      got.add(d);
      // The API took every write.
      if (d.write() == Write.CREATE || d.write() == Write.UPDATE) {
        book.written(s, d.count());
      }
    }
    assertEquals(expected, got, behaviour);
  }

  @Test
  void aWriteThatFailedIsRetriedByTheNextOccurrenceWithEverythingCounted() {
    Series s = series("evacuation-1", "DrainBlocked");
    assertEquals(create(1), book.occurred(s)); // the API did not take it
    assertEquals(create(2), book.occurred(s));
    book.written(s, 2);
    nanos.addAndGet(INTERVAL.toNanos());
    assertEquals(update(3), book.occurred(s)); // not taken either
    assertEquals(
        update(4), book.occurred(s), "still due: the last write is older than the interval");
  }

  @Test
  void aSeriesFoundFromAnEarlierRunContinuesItsCount() {
    Series s = series("evacuation-1", "DrainBlocked");
    assertEquals(create(1), book.occurred(s));
    book.written(s, 7); // the object existed with 6
    nanos.addAndGet(INTERVAL.toNanos());
    assertEquals(update(8), book.occurred(s));
  }

  @Test
  void eventNamesAreStablePerSeriesDistinctAcrossSeriesAndValid() {
    Series a = series("evacuation-1", "DrainBlocked");
    assertEquals(a.eventName(), series("evacuation-1", "DrainBlocked").eventName());
    assertNotEquals(a.eventName(), series("evacuation-2", "DrainBlocked").eventName());
    assertNotEquals(a.eventName(), series("evacuation-1", "DrainSucceeded").eventName());
    assertNotEquals(
        a.eventName(),
        new Series("vm-1", "uid-1", "evacuation-1", "Normal", "DrainBlocked").eventName());
    String longName = "n".repeat(253);
    String name = new Series(longName, "uid", "", "Normal", "GuestNodeCordoned").eventName();
    assertTrue(name.length() <= 253 && name.matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?"), name);
  }

  static Series series(String scope, String reason) {
    return new Series("vm-1", "uid-1", scope, "Warning", reason);
  }
}
