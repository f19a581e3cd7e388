package dev.capk.vmieviction.time;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GoDurationTest {
  @Test
  void parsesGoDurations() {
    assertEquals(Duration.ZERO, GoDuration.parse("0"));
    assertEquals(Duration.ZERO, GoDuration.parse("0s"));
    assertEquals(Duration.ofSeconds(90), GoDuration.parse("90s"));
    assertEquals(Duration.ofSeconds(90), GoDuration.parse("1m30s"));
    assertEquals(Duration.ofMinutes(90), GoDuration.parse("1.5h"));
    assertEquals(Duration.ofMillis(250), GoDuration.parse("250ms"));
    assertEquals(Duration.ofNanos(1500), GoDuration.parse("1us500ns"));
    assertEquals(Duration.ofMillis(500), GoDuration.parse(".5s"));
    assertEquals(Duration.ofHours(2).plusMinutes(3).plusSeconds(4), GoDuration.parse("2h3m4s"));
  }

  @Test
  void refusesWhatGoRefusesAndNegatives() {
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("30"))
            .getMessage()
            .contains("missing unit"));
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("abc"));
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("5x"));
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse(""));
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("s"));
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("-5s"))
            .getMessage()
            .contains("negative"));
  }

  @Test
  void formatsLikeGo() {
    assertEquals("0s", GoDuration.format(Duration.ZERO));
    assertEquals("20s", GoDuration.format(Duration.ofSeconds(20)));
    assertEquals("1m30s", GoDuration.format(Duration.ofSeconds(90)));
    assertEquals("1h0m0s", GoDuration.format(Duration.ofHours(1)));
    assertEquals("250ms", GoDuration.format(Duration.ofMillis(250)));
    assertEquals("1.5s", GoDuration.format(Duration.ofMillis(1500)));
  }

  @Test
  void isoDurationsAreTakenAndAMalformedOneIsNamedAsADuration() {
    assertEquals(Duration.ofMinutes(10), GoDuration.parseOrIso("PT10M"));
    assertEquals(Duration.ofSeconds(90), GoDuration.parseOrIso("1m30s"));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> GoDuration.parseOrIso("PT10X"));
    assertEquals("invalid duration \"PT10X\": not an ISO-8601 one", e.getMessage());
  }
}
