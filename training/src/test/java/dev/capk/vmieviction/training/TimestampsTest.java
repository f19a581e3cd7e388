package dev.capk.vmieviction.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TimestampsTest {
  @Test
  void everyTimeMovesByTheShiftKeepingItsForm() {
    String recorded =
        "{\"creationTimestamp\":\"2026-11-27T23:59:30Z\","
            + "\"eventTime\":\"2026-11-27T23:59:59.999999Z\","
            + "\"annotations\":{\"start\":\"2026-11-27T10:00:00.5Z\"}}";
    assertEquals(
        "{\"creationTimestamp\":\"2026-11-30T00:00:30Z\","
            + "\"eventTime\":\"2026-11-30T00:00:59.999999Z\","
            + "\"annotations\":{\"start\":\"2026-11-29T10:01:00.5Z\"}}",
        Timestamps.shift(recorded, Duration.ofDays(2).plusSeconds(60)));
  }

  @Test
  void theLatestTimeIsFoundAcrossTextsAndFractions() {
    assertEquals(
        java.time.Instant.parse("2026-11-27T10:00:00.5Z"),
        Timestamps.latest(
            java.util.List.of(
                "{\"a\":\"2026-11-27T10:00:00Z\"}",
                "{\"b\":\"2026-11-27T10:00:00.5Z\",\"c\":\"2026-11-26T23:00:00Z\"}",
                "no time")));
    assertEquals(null, Timestamps.latest(java.util.List.of("no time")));
  }

  @Test
  void textThatHoldsNoTimeOrNoShiftIsUnchanged() {
    String text = "{\"name\":\"2026-11-27\",\"duration\":\"10m0s\"}";
    assertEquals(text, Timestamps.shift(text, Duration.ofHours(1)));
    String time = "{\"t\":\"2026-11-27T10:00:00Z\"}";
    assertSame(time, Timestamps.shift(time, Duration.ZERO));
  }
}
