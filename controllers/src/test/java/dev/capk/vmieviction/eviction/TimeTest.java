package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.Evacuator.EvacuationDeadline;
import dev.capk.vmieviction.time.Deadline;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
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
      assertEquals(Optional.empty(), DrainStartTime.parse(null, NOW, SKEW));
    }

    @Test
    void ownFormatRoundTrips() {
      var p = DrainStartTime.parse(DrainStartTime.format(NOW.minusSeconds(30)), NOW, SKEW);
      assertEquals(Optional.of(NOW.minusSeconds(30)), p);
    }

    @Test
    void offsetsAndFractionsAreAcceptedAndNormalisedToUtc() {
      assertEquals(
          Optional.of(Instant.parse("2025-03-01T11:00:00Z")),
          DrainStartTime.parse("2025-03-01T13:00:00+02:00", NOW, SKEW));
      assertEquals(
          Optional.of(Instant.parse("2025-03-01T11:59:59.5Z")),
          DrainStartTime.parse("2025-03-01T11:59:59.5Z", NOW, SKEW));
    }

    @ParameterizedTest
    @ValueSource(
        strings = {
          "",
          " ",
          "yesterday",
          "2025-03-01",
          "2025-03-01 11:00:00",
          "1700000000",
          "2025-13-01T00:00:00Z"
        })
    void garbageHoldsNoStart(String raw) {
      assertEquals(Optional.empty(), DrainStartTime.parse(raw, NOW, SKEW));
    }

    @Test
    void aStartFarInTheFutureIsMalformed_itWouldPostponeTheDeadline() {
      assertEquals(Optional.empty(), DrainStartTime.parse("2025-03-01T13:00:00Z", NOW, SKEW));
    }

    @Test
    void aStartSlightlyInTheFutureIsToleratedAsClockSkew() {
      assertTrue(DrainStartTime.parse("2025-03-01T12:00:30Z", NOW, SKEW).isPresent());
    }
  }

  @Nested
  class DeadlineArithmetic {
    private static final Duration TEN_MINUTES = Duration.ofMinutes(10);

    /** The evacuation deadline for a drain started at NOW, read at {@code now}. */
    private Deadline deadline(Duration timeout, String capkGrace, Instant now) {
      return EvacuationDeadline.of(NOW, timeout, capkGrace, Clock.fixed(now, ZoneOffset.UTC));
    }

    @Test
    void deadlineIsStartPlusTimeout() {
      Deadline d = deadline(TEN_MINUTES, null, NOW);
      assertEquals(NOW.plus(TEN_MINUTES), d.at());
      assertFalse(EvacuationDeadline.fromCapkGraceTime(d, NOW, TEN_MINUTES));
    }

    @Test
    void capksGraceTimeAnnotationIsHonouredAsTheDeadline() {
      Deadline d = deadline(TEN_MINUTES, "2025-03-01T12:03:00Z", NOW);
      assertEquals(Instant.parse("2025-03-01T12:03:00Z"), d.at());
      assertTrue(EvacuationDeadline.fromCapkGraceTime(d, NOW, TEN_MINUTES));
    }

    @Test
    void capkGraceTimeLaterThanTheDrainTimeoutNeverLiftsTheGlobalTimeout() {
      Deadline d = deadline(TEN_MINUTES, "9999-12-31T23:59:59Z", NOW);
      assertEquals(NOW.plus(TEN_MINUTES), d.at());
      assertFalse(EvacuationDeadline.fromCapkGraceTime(d, NOW, TEN_MINUTES));
    }

    @Test
    void unparsableCapkGraceTimeIsIgnored() {
      Deadline d = deadline(TEN_MINUTES, "soon", NOW);
      assertEquals(NOW.plus(TEN_MINUTES), d.at());
      assertFalse(EvacuationDeadline.fromCapkGraceTime(d, NOW, TEN_MINUTES));
    }

    @Test
    void passedAtAndAfterTheDeadlineNotBefore() {
      assertFalse(deadline(TEN_MINUTES, null, NOW.plus(TEN_MINUTES).minusMillis(1)).passed());
      assertTrue(deadline(TEN_MINUTES, null, NOW.plus(TEN_MINUTES)).passed());
      assertTrue(deadline(TEN_MINUTES, null, NOW.plus(Duration.ofHours(1))).passed());
    }

    @Test
    void remainingNeverNegative() {
      assertEquals(
          Duration.ofSeconds(40),
          deadline(Duration.ofMinutes(1), null, NOW.plusSeconds(20)).remaining());
      assertEquals(
          Duration.ZERO, deadline(Duration.ofMinutes(1), null, NOW.plusSeconds(120)).remaining());
    }

    @Test
    void requeueIsTheWantedDelayWhenTheDeadlineIsFar() {
      Deadline d = deadline(TEN_MINUTES, null, NOW);
      assertEquals(
          Duration.ofSeconds(20), EvacuationDeadline.requeueDelay(d, Duration.ofSeconds(20)));
    }

    @Test
    void requeueIsNeverLaterThanTheDeadline() {
      Deadline d = deadline(Duration.ofSeconds(30), null, NOW.plusSeconds(25));
      Duration delay = EvacuationDeadline.requeueDelay(d, Duration.ofMinutes(5));
      assertEquals(Duration.ofSeconds(5).plus(EvacuationDeadline.DEADLINE_MARGIN), delay);
      assertTrue(
          NOW.plusSeconds(25).plus(delay).isAfter(d.at()),
          "the requeue must see the deadline passed");
    }

    @Test
    void negativeWantedDelayBecomesImmediate() {
      Deadline d = deadline(TEN_MINUTES, null, NOW);
      assertEquals(Duration.ZERO, EvacuationDeadline.requeueDelay(d, Duration.ofSeconds(-1)));
    }

    @Test
    void drainPassIsTheAttemptTimeoutCutToWhatIsLeft() {
      assertEquals(
          Duration.ofSeconds(20),
          EvacuationDeadline.passTimeout(deadline(TEN_MINUTES, null, NOW), Duration.ofSeconds(20)));
      assertEquals(
          Duration.ofSeconds(3),
          EvacuationDeadline.passTimeout(
              deadline(TEN_MINUTES, null, NOW.plus(TEN_MINUTES).minusSeconds(3)),
              Duration.ofSeconds(20)));
    }

    @Test
    void drainPassGetsAtLeastASecond() {
      Deadline d = deadline(TEN_MINUTES, null, NOW.plus(TEN_MINUTES).minusMillis(10));
      assertEquals(
          EvacuationDeadline.MIN_PASS, EvacuationDeadline.passTimeout(d, Duration.ofSeconds(20)));
    }
  }
}
