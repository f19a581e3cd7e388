package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClusterOverrideTest {

  final StepContext seen = StepContextTest.context();
  final EvacuationLimit flag = EvacuationLimit.parse("3").orElseThrow();
  final List<String> told = new ArrayList<>();

  EvacuationLimit resolve(Optional<String> raw, String evacuation) {
    return EvictionSettings.clusterOverride(
        raw,
        EvacuationLimit::parse,
        flag,
        seen,
        evacuation,
        (s, used) -> told.add(s + "->" + used));
  }

  @Test
  void noAnnotationIsTheFlagAndAValidOneOverridesIt() {
    assertEquals(flag, resolve(Optional.empty(), "uid/t1"));
    assertEquals(EvacuationLimit.parse("25%").orElseThrow(), resolve(Optional.of("25%"), "uid/t1"));
    assertEquals(List.of(), told);
  }

  @Test
  void anInvalidValueIsTheFlagToldOncePerEvacuationAndValue() {
    assertEquals(flag, resolve(Optional.of("many"), "uid/t1"));
    assertEquals(flag, resolve(Optional.of("many"), "uid/t1"));
    assertEquals(List.of("many->" + flag), told);

    resolve(Optional.of("lots"), "uid/t1"); // another value
    resolve(Optional.of("many"), "uid/t2"); // another evacuation
    assertEquals(List.of("many->" + flag, "lots->" + flag, "many->" + flag), told);
  }

  @Test
  void theSameInvalidValueInTwoAnnotationsIsToldForEach() {
    resolve(Optional.of("many"), "uid/t1");
    LiveMigrationPolicy policy =
        EvictionSettings.clusterOverride(
            Optional.of("many"),
            LiveMigrationPolicy::parse,
            LiveMigrationPolicy.NEVER,
            seen,
            "uid/t1",
            (s, used) -> told.add(s + "->" + used.value));
    assertEquals(LiveMigrationPolicy.NEVER, policy);
    assertEquals(List.of("many->" + flag, "many->never"), told);
  }

  @Test
  void aLongValueIsShownCut() {
    resolve(Optional.of("x".repeat(100)), "uid/t1");
    assertEquals(List.of("x".repeat(64) + "...->" + flag), told);
  }
}
