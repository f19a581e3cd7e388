package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TimeTest {

  static final Instant NOW = Instant.parse("2025-03-01T12:00:00Z");
  static final Duration SKEW = Duration.ofMinutes(1);

  @Nested
  class StartTimeAnnotation {
    @Test
    void formatsAsRfc3339UtcWholeSeconds() {
      assertEquals("2025-03-01T12:00:00Z", DrainStartTime.format(NOW.plusMillis(999)));
    }

    @Test
    void absentAnnotationIsAbsent() {
      assertInstanceOf(DrainStartTime.Absent.class, DrainStartTime.parse(null, NOW, SKEW));
    }

    @Test
    void ownFormatRoundTrips() {
      var p = DrainStartTime.parse(DrainStartTime.format(NOW.minusSeconds(30)), NOW, SKEW);
      assertEquals(new DrainStartTime.Valid(NOW.minusSeconds(30)), p);
    }

    @Test
    void offsetsAndFractionsAreAcceptedAndNormalisedToUtc() {
      assertEquals(new DrainStartTime.Valid(Instant.parse("2025-03-01T11:00:00Z")),
          DrainStartTime.parse("2025-03-01T13:00:00+02:00", NOW, SKEW));
      assertEquals(new DrainStartTime.Valid(Instant.parse("2025-03-01T11:59:59.5Z")),
          DrainStartTime.parse("2025-03-01T11:59:59.5Z", NOW, SKEW));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "yesterday", "2025-03-01", "2025-03-01 11:00:00", "1700000000", "2025-13-01T00:00:00Z"})
    void garbageIsMalformedAndKeptForTheMessage(String raw) {
      var p = DrainStartTime.parse(raw, NOW, SKEW);
      assertEquals(new DrainStartTime.Malformed(raw), p);
    }

    @Test
    void aStartFarInTheFutureIsMalformed_itWouldPostponeTheDeadline() {
      assertInstanceOf(DrainStartTime.Malformed.class, DrainStartTime.parse("2025-03-01T13:00:00Z", NOW, SKEW));
    }

    @Test
    void aStartSlightlyInTheFutureIsToleratedAsClockSkew() {
      assertInstanceOf(DrainStartTime.Valid.class, DrainStartTime.parse("2025-03-01T12:00:30Z", NOW, SKEW));
    }
  }

  @Nested
  class DeadlineArithmetic {
    @Test
    void deadlineIsStartPlusTimeout() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), null);
      assertEquals(NOW.plus(Duration.ofMinutes(10)), d.at());
      assertEquals(Deadline.Source.DRAIN_TIMEOUT, d.source());
    }

    @Test
    void capksGraceTimeAnnotationIsHonouredAsTheDeadline() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), "2025-03-01T12:03:00Z");
      assertEquals(Instant.parse("2025-03-01T12:03:00Z"), d.at());
      assertEquals(Deadline.Source.CAPK_GRACE_TIME, d.source());
    }

    @Test
    void capkGraceTimeLaterThanTheDrainTimeoutNeverLiftsTheGlobalTimeout() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), "9999-12-31T23:59:59Z");
      assertEquals(NOW.plus(Duration.ofMinutes(10)), d.at());
      assertEquals(Deadline.Source.DRAIN_TIMEOUT, d.source());
    }

    @Test
    void unparsableCapkGraceTimeIsIgnored() {
      assertEquals(Deadline.Source.DRAIN_TIMEOUT, Deadline.of(NOW, Duration.ofMinutes(10), "soon").source());
    }

    @Test
    void passedAtAndAfterTheDeadlineNotBefore() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), null);
      assertFalse(d.passed(NOW.plus(Duration.ofMinutes(10)).minusMillis(1)));
      assertTrue(d.passed(NOW.plus(Duration.ofMinutes(10))));
      assertTrue(d.passed(NOW.plus(Duration.ofHours(1))));
    }

    @Test
    void remainingNeverNegative() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(1), null);
      assertEquals(Duration.ofSeconds(40), d.remaining(NOW.plusSeconds(20)));
      assertEquals(Duration.ZERO, d.remaining(NOW.plusSeconds(120)));
    }

    @Test
    void requeueIsTheWantedDelayWhenTheDeadlineIsFar() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), null);
      assertEquals(Duration.ofSeconds(20), d.cap(NOW, Duration.ofSeconds(20)));
    }

    @Test
    void requeueIsNeverLaterThanTheDeadline() {
      Deadline d = Deadline.of(NOW, Duration.ofSeconds(30), null);
      Duration delay = d.cap(NOW.plusSeconds(25), Duration.ofMinutes(5));
      assertEquals(Duration.ofSeconds(5).plus(Deadline.DEADLINE_MARGIN), delay);
      assertTrue(NOW.plusSeconds(25).plus(delay).isAfter(d.at()), "the requeue must see the deadline passed");
    }

    @Test
    void negativeWantedDelayBecomesImmediate() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), null);
      assertEquals(Duration.ZERO, d.cap(NOW, Duration.ofSeconds(-1)));
    }

    @Test
    void drainPassIsTheAttemptTimeoutCutToWhatIsLeft() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), null);
      assertEquals(Duration.ofSeconds(20), d.passTimeout(NOW, Duration.ofSeconds(20)));
      assertEquals(Duration.ofSeconds(3), d.passTimeout(NOW.plus(Duration.ofMinutes(10)).minusSeconds(3), Duration.ofSeconds(20)));
    }

    @Test
    void drainPassGetsAtLeastASecond() {
      Deadline d = Deadline.of(NOW, Duration.ofMinutes(10), null);
      assertEquals(Deadline.MIN_PASS, d.passTimeout(NOW.plus(Duration.ofMinutes(10)).minusMillis(10), Duration.ofSeconds(20)));
    }
  }
}
