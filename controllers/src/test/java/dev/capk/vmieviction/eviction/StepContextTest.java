package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/** What the steps' one "told" memory promises: a lasting wait is logged once per change. */
class StepContextTest {

  /** A context for the told memory only: no infra, guests or events. */
  static StepContext context() {
    return context(null, EvacuationLimit.UNLIMITED);
  }

  /** With {@code events} and the flag {@code limit}; the live-migration flag is never. */
  static StepContext context(VmiEvents events, EvacuationLimit limit) {
    EvictionSettings settings =
        new EvictionSettings(
            Duration.ofMinutes(10),
            Duration.ofSeconds(20),
            Duration.ofSeconds(20),
            "None",
            Duration.ofMinutes(1),
            limit,
            EvictionSettings.DEFAULT_DRAIN_RESERVE,
            LiveMigrationPolicy.NEVER,
            EvictionSettings.DEFAULT_MIGRATION_ATTEMPTS);
    return new StepContext(
        null,
        null,
        events,
        new EvictionMetrics(new PrometheusRegistry()),
        settings,
        Clock.systemUTC(),
        key -> {});
  }

  final StepContext waits = context();

  @Test
  void aWaitIsToldAtInfoOncePerChangeOfWhatItWaitsForAndAtDebugOtherwise() {
    List<Level> levels =
        List.of("3 pods", "3 pods", "3 pods", "2 pods", "2 pods", "3 pods").stream()
            .map(w -> waits.level("uid-1/drain", w))
            .toList();
    assertEquals(
        List.of(Level.INFO, Level.DEBUG, Level.DEBUG, Level.INFO, Level.DEBUG, Level.INFO), levels);
  }

  @Test
  void waitsUnderOtherKeysAreToldEachOnTheirOwn() {
    assertEquals(Level.INFO, waits.level("uid-1/drain", "3 pods"));
    assertEquals(Level.INFO, waits.level("uid-2/drain", "3 pods"));
    assertEquals(Level.INFO, waits.level("uid-1/held", "3 pods"));
    assertEquals(Level.DEBUG, waits.level("uid-1/drain", "3 pods"));
  }

  @Test
  void aForgottenWaitIsToldAfreshEvenUnchanged() {
    waits.level("uid-1/drain", "3 pods");
    waits.forget("uid-1/drain");
    assertEquals(Level.INFO, waits.level("uid-1/drain", "3 pods"));
  }
}
