package dev.capk.vmieviction.eviction;

import static dev.capk.vmieviction.eviction.TestVmis.deleting;
import static dev.capk.vmieviction.eviction.TestVmis.node;
import static dev.capk.vmieviction.eviction.TestVmis.vmi;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.Evacuator.UncordonDecision;
import dev.capk.vmieviction.eviction.Guest.GuestNodeMatch;
import dev.capk.vmieviction.eviction.Guest.GuestNodeMatch.NodeReadiness;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class DecisionsTest {

  @Nested
  class DrainStart {
    final java.time.Instant now = java.time.Instant.parse("2025-03-01T12:00:30.700Z");
    final java.time.Instant earliest = java.time.Instant.parse("2025-03-01T12:00:00Z");

    DrainStartTime.Decision decide(String annotation, java.time.Instant known) {
      return DrainStartTime.decide(annotation, Optional.ofNullable(known), Optional.empty(), now);
    }

    @Test
    void withoutAKnownStartTheAnnotationIsTheRecord() {
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.KEEP, java.time.Instant.parse("2025-03-01T11:00:00Z"), null),
          decide("2025-03-01T11:00:00Z", null));
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.BEGIN, java.time.Instant.parse("2025-03-01T12:00:30Z"), null),
          decide(null, null),
          "a new evacuation starts now, at second precision as written");
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.MALFORMED,
              java.time.Instant.parse("2025-03-01T12:00:30Z"),
              "garbage"),
          decide("garbage", null));
    }

    @Test
    void aNewEvacuationStartsWhenItsMarkWasFirstSeenNeverLaterThanNow() {
      java.time.Instant seen = java.time.Instant.parse("2025-03-01T12:00:18.400Z");
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.BEGIN, java.time.Instant.parse("2025-03-01T12:00:18Z"), null),
          DrainStartTime.decide(null, Optional.empty(), Optional.of(seen), now));
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.MALFORMED,
              java.time.Instant.parse("2025-03-01T12:00:18Z"),
              "garbage"),
          DrainStartTime.decide("garbage", Optional.empty(), Optional.of(seen), now));
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.BEGIN, java.time.Instant.parse("2025-03-01T12:00:30Z"), null),
          DrainStartTime.decide(null, Optional.empty(), Optional.of(now.plusSeconds(5)), now),
          "a sighting after now (the clock stepped back) is not a start");
      assertEquals(
          new DrainStartTime.Decision(DrainStartTime.Kind.KEEP, earliest, null),
          DrainStartTime.decide(
              DrainStartTime.format(earliest), Optional.empty(), Optional.of(seen), now),
          "a recorded start is the record: a sighting never moves it");
    }

    @Test
    void withAKnownStartTheDeadlineOnlyMovesEarlier() {
      assertEquals(
          new DrainStartTime.Decision(DrainStartTime.Kind.KEEP, earliest, null),
          decide("2025-03-01T12:00:00Z", earliest));
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.KEEP, java.time.Instant.parse("2025-03-01T11:50:00Z"), null),
          decide("2025-03-01T11:50:00Z", earliest),
          "earlier: accepted");
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.MOVED_LATER, earliest, "2025-03-01T12:00:20Z"),
          decide("2025-03-01T12:00:20Z", earliest));
      assertEquals(
          new DrainStartTime.Decision(DrainStartTime.Kind.REMOVED, earliest, null),
          decide(null, earliest));
      assertEquals(
          new DrainStartTime.Decision(DrainStartTime.Kind.MADE_UNUSABLE, earliest, "soon"),
          decide("soon", earliest));
      assertEquals(
          new DrainStartTime.Decision(
              DrainStartTime.Kind.MADE_UNUSABLE, earliest, "2030-01-01T00:00:00Z"),
          decide("2030-01-01T00:00:00Z", earliest),
          "a future start is malformed");
    }
  }

  @Nested
  class EffectiveStrategy {
    @Test
    void vmisOwnStrategyWinsOverClusterDefaultAndFallback() {
      assertEquals(
          "External",
          Eligibility.effectiveStrategy("External", Optional.of("LiveMigrate")).orElse("None"));
      assertEquals(
          "None",
          Eligibility.effectiveStrategy("None", Optional.of("External")).orElse("External"));
    }

    @Test
    void unsetStrategyTakesTheKubeVirtClusterDefault() {
      assertEquals(
          "External", Eligibility.effectiveStrategy(null, Optional.of("External")).orElse("None"));
      assertEquals(
          "External",
          Eligibility.effectiveStrategy("  ", Optional.of(" External ")).orElse("None"));
    }

    @Test
    void theFallbackDecidesOnlyWhenNeitherTheVmiNorTheClusterSays() {
      assertTrue(Eligibility.effectiveStrategy(null, Optional.empty()).isEmpty());
      assertTrue(Eligibility.effectiveStrategy(" ", Optional.of("")).isEmpty());
      assertFalse(Eligibility.effectiveStrategy("None", Optional.empty()).isEmpty());
      assertFalse(Eligibility.effectiveStrategy(null, Optional.of("LiveMigrate")).isEmpty());
    }

    @Test
    void unreadableOrUnsetClusterDefaultFallsBackToTheFlag() {
      assertEquals(
          "External", Eligibility.effectiveStrategy(null, Optional.empty()).orElse("External"));
      assertEquals("None", Eligibility.effectiveStrategy(null, Optional.of("")).orElse("None"));
    }

    @Test
    void onlyExactExternalIsExternal() {
      for (String s : Arrays.asList("external", "LiveMigrate", null)) {
        assertEquals(Eligibility.NOT_EXTERNAL, Eligibility.of(vmi("vm", s, "infra-1"), s), s);
      }
      assertEquals(Eligibility.EVACUATE, Eligibility.of(vmi("vm", null, "infra-1"), "External"));
    }
  }

  @Nested
  class ShouldAct {
    @Test
    void externalWithEvacuationNodeIsEvacuated() {
      assertEquals(
          Eligibility.EVACUATE, Eligibility.of(vmi("vm", "External", "infra-1"), "External"));
    }

    @Test
    void vmiBeingDeletedIsLeftAloneWhateverElseItSays() {
      assertEquals(
          Eligibility.DELETING,
          Eligibility.of(deleting(vmi("vm", "External", "infra-1")), "External"));
    }

    @Test
    void nonExternalStrategiesAreNeverTouched() {
      for (String s : List.of("None", "LiveMigrate", "LiveMigrateIfPossible")) {
        assertEquals(Eligibility.NOT_EXTERNAL, Eligibility.of(vmi("vm", s, "infra-1"), s), s);
      }
    }

    @Test
    void externalWithoutEvacuationNodeIsNotEvacuating() {
      assertEquals(
          Eligibility.NOT_EVACUATING, Eligibility.of(vmi("vm", "External", null), "External"));
      assertEquals(
          Eligibility.NOT_EVACUATING, Eligibility.of(vmi("vm", "External", ""), "External"));
      var noStatus = vmi("vm", "External", null).status(null);
      assertEquals(Eligibility.NOT_EVACUATING, Eligibility.of(noStatus, "External"));
    }
  }

  @Nested
  class GuestNodeLookup {
    @Test
    void nodeNamedLikeTheVmiIsChosenFirst() {
      V1Node byName = node("vm-1", "kubevirt://other", false, "True");
      V1Node byProvider = node("guest-node-x", "kubevirt://vm-1", false, "True");
      assertEquals(Optional.of(byName), GuestNodeMatch.choose("vm-1", List.of(byProvider, byName)));
    }

    @Test
    void otherwiseTheNodeWhoseProviderIdNamesTheVmi() {
      V1Node byProvider = node("guest-node-x", "kubevirt://vm-1", false, "True");
      V1Node other = node("guest-node-y", "kubevirt://vm-2", false, "True");
      assertEquals(
          Optional.of(byProvider), GuestNodeMatch.choose("vm-1", List.of(other, byProvider)));
    }

    @Test
    void noMatchMeansNoNode() {
      assertEquals(
          Optional.empty(), GuestNodeMatch.choose("vm-1", List.of(node("a", null, false, "True"))));
      assertEquals(Optional.empty(), GuestNodeMatch.choose("vm-1", List.of()));
    }

    @Test
    void providerIdMustMatchExactlyNotByPrefix() {
      assertEquals(
          Optional.empty(),
          GuestNodeMatch.choose("vm-1", List.of(node("x", "kubevirt://vm-10", false, "True"))));
    }
  }

  @Nested
  class Readiness {
    @Test
    void readyConditionMapsToReadiness() {
      assertEquals(NodeReadiness.READY, NodeReadiness.of(node("n", null, false, "True")));
      assertEquals(NodeReadiness.NOT_READY, NodeReadiness.of(node("n", null, false, "False")));
      assertEquals(NodeReadiness.UNREACHABLE, NodeReadiness.of(node("n", null, false, "Unknown")));
    }

    @Test
    void missingReadyConditionCountsAsUnreachable() {
      assertEquals(NodeReadiness.UNREACHABLE, NodeReadiness.of(node("n", null, false, null)));
      assertEquals(
          NodeReadiness.UNREACHABLE,
          NodeReadiness.of(node("n", null, false, null).status(new V1NodeStatus())));
    }
  }

  @Nested
  class Uncordon {
    private V1Node marked(boolean unschedulable, String ready) {
      V1Node n = node("vm-1", null, unschedulable, ready);
      n.getMetadata().getAnnotations().put(EvictionAnnotations.CORDONED_BY, "old-uid");
      return n;
    }

    @Test
    void nodeWithoutOurMarkIsNeverOurs_evenIfCordoned() {
      assertEquals(
          UncordonDecision.NOT_OURS,
          UncordonDecision.of(node("vm-1", null, true, "True"), vmi("vm-1", "External", null)));
    }

    @Test
    void markedCordonedReadyNodeOfARunningRecreatedVmiIsUncordoned() {
      assertEquals(
          UncordonDecision.UNCORDON,
          UncordonDecision.of(marked(true, "True"), vmi("vm-1", "External", null)));
    }

    @Test
    void waitsWhileTheVmiStillEvacuatesOrIsNotRunningOrIsDeleted() {
      assertEquals(
          UncordonDecision.WAIT,
          UncordonDecision.of(marked(true, "True"), vmi("vm-1", "External", "infra-1")));
      var pending = vmi("vm-1", "External", null);
      pending.getStatus().setPhase("Scheduling");
      assertEquals(UncordonDecision.WAIT, UncordonDecision.of(marked(true, "True"), pending));
      assertEquals(
          UncordonDecision.WAIT,
          UncordonDecision.of(marked(true, "True"), deleting(vmi("vm-1", "External", null))));
      assertEquals(UncordonDecision.WAIT, UncordonDecision.of(marked(true, "True"), null));
    }

    @Test
    void waitsUntilTheGuestNodeIsReadyAgain() {
      assertEquals(
          UncordonDecision.WAIT,
          UncordonDecision.of(marked(true, "False"), vmi("vm-1", "External", null)));
      assertEquals(
          UncordonDecision.WAIT,
          UncordonDecision.of(marked(true, "Unknown"), vmi("vm-1", "External", null)));
    }

    @Test
    void markOnAnAlreadySchedulableNodeIsOnlyRemoved() {
      assertEquals(
          UncordonDecision.REMOVE_MARK,
          UncordonDecision.of(marked(false, "True"), vmi("vm-1", "External", "infra-1")));
    }
  }
}
