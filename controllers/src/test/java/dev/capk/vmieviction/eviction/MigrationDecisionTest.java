package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import dev.capk.vmieviction.eviction.MigrationDecision.Facts;
import dev.capk.vmieviction.eviction.MigrationDecision.FallBack;
import dev.capk.vmieviction.eviction.MigrationDecision.Follow;
import dev.capk.vmieviction.eviction.MigrationDecision.MigrationLimits;
import dev.capk.vmieviction.eviction.MigrationDecision.Start;
import dev.capk.vmieviction.eviction.MigrationDecision.Step;
import dev.capk.vmieviction.eviction.MigrationDecision.Succeeded;
import dev.capk.vmieviction.eviction.MigrationDecision.WaitForSlot;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The migrate step as a table: policy, LiveMigratable, the recorded attempt and its migration's
 * phase, KubeVirt's limits and the clock against the cutoff (deadline minus reserve) in; the next
 * step out.
 */
class MigrationDecisionTest {

  static final Instant CUTOFF = Instant.parse("2025-03-01T12:07:00Z");
  static final Instant EARLY = CUTOFF.minusSeconds(60);
  static final Instant LATE = CUTOFF;
  static final Optional<String> ABSENT = Optional.empty();

  static final LiveMigrationPolicy NEVER = LiveMigrationPolicy.NEVER;
  static final LiveMigrationPolicy PREFER = LiveMigrationPolicy.PREFER;

  static Facts facts(
      LiveMigrationPolicy policy,
      boolean migratable,
      int attempt,
      Optional<String> phase,
      Instant now,
      int runningInCluster,
      int runningFromNode) {
    return new Facts(
        policy,
        migratable,
        attempt,
        phase,
        2,
        now,
        CUTOFF,
        runningInCluster,
        runningFromNode,
        MigrationLimits.KUBEVIRT_DEFAULTS);
  }

  static Optional<String> phase(String p) {
    return Optional.of(p);
  }

  static Stream<Arguments> table() {
    return Stream.of(
        Arguments.of(
            "not migratable", facts(PREFER, false, 0, ABSENT, EARLY, 0, 0), FallBack.class, false),
        Arguments.of(
            "too late to start", facts(PREFER, true, 0, ABSENT, LATE, 0, 0), FallBack.class, false),
        Arguments.of("start", facts(PREFER, true, 0, ABSENT, EARLY, 4, 1), Start.class, false),
        Arguments.of(
            "cluster limit", facts(PREFER, true, 0, ABSENT, EARLY, 5, 0), WaitForSlot.class, false),
        Arguments.of(
            "node limit", facts(PREFER, true, 0, ABSENT, EARLY, 2, 2), WaitForSlot.class, false),
        Arguments.of(
            "pending, KubeVirt has not looked yet",
            facts(PREFER, true, 1, phase(""), EARLY, 1, 1),
            Follow.class,
            false),
        Arguments.of(
            "running", facts(PREFER, true, 1, phase("Running"), EARLY, 1, 1), Follow.class, false),
        Arguments.of(
            "running at the cutoff: cancel",
            facts(PREFER, true, 1, phase("Running"), LATE, 1, 1),
            FallBack.class,
            true),
        Arguments.of(
            "succeeded",
            facts(PREFER, true, 1, phase("Succeeded"), LATE, 0, 0),
            Succeeded.class,
            false),
        Arguments.of(
            "first attempt failed: second",
            facts(PREFER, true, 1, phase("Failed"), EARLY, 0, 0),
            Start.class,
            false),
        Arguments.of(
            "first attempt failed, no slot",
            facts(PREFER, true, 1, phase("Failed"), EARLY, 5, 0),
            WaitForSlot.class,
            false),
        Arguments.of(
            "first attempt vanished: second",
            facts(PREFER, true, 1, ABSENT, EARLY, 0, 0),
            Start.class,
            false),
        Arguments.of(
            "second attempt failed: fall back",
            facts(PREFER, true, 2, phase("Failed"), EARLY, 0, 0),
            FallBack.class,
            false),
        Arguments.of(
            "failed at the cutoff: fall back",
            facts(PREFER, true, 1, phase("Failed"), LATE, 0, 0),
            FallBack.class,
            false),
        Arguments.of(
            "policy turned never mid-migration: cancel",
            facts(NEVER, true, 1, phase("Running"), EARLY, 1, 1),
            FallBack.class,
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void decides(String name, Facts facts, Class<? extends Step> expected, boolean cancels) {
    Step step = MigrationDecision.decide(facts);
    assertEquals(expected, step.getClass(), name + ": " + step);
    if (step instanceof FallBack b) {
      assertEquals(cancels, b.cancel(), name + ": " + step);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void startsTheNextAttemptOnly(
      String name, Facts facts, Class<? extends Step> expected, boolean cancels) {
    if (MigrationDecision.decide(facts) instanceof Start s) {
      assertEquals(facts.attempt() + 1, s.number(), name);
      assertEquals(facts.attempt() > 0, s.afterFailure(), name);
    }
  }
}
