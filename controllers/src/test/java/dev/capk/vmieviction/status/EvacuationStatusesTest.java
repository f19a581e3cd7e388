package dev.capk.vmieviction.status;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus;
import dev.capk.vmieviction.status.EvacuationStatuses.EvacuationStatus;
import dev.capk.vmieviction.status.EvacuationStatuses.VmiEvent;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Phase, blocker, guest node and deadline of an evacuation, from a VMI and its events: a table. */
class EvacuationStatusesTest {

  static final Instant START = Instant.parse("2026-01-01T10:00:00Z");
  static final Instant NOW = Instant.parse("2026-01-01T10:05:00Z");
  static final Duration TIMEOUT = Duration.ofMinutes(10);

  // The controller's messages, as Evacuator, TenantAdmissionCheck and MachineContractCheck write
  // them.
  static final String BLOCKED =
      "Guest node vm-a not drained yet (1 pod(s) left): PodDisruptionBudgets app/db-pdb (pod"
          + " app/db-0); VMI deleted anyway at 2026-01-01T10:10:00Z";
  static final String HELD =
      "The control-plane guest node is not drained yet, waiting for: control-plane VMI cp-0 still"
          + " being evacuated; goes ahead anyway at 2026-01-01T10:07:00Z (deadline"
          + " 2026-01-01T10:10:00Z minus --drain-reserve)";
  static final String PAUSED =
      "Cluster t/guest is paused (spec.paused or annotation cluster.x-k8s.io/paused): its guest"
          + " node is not cordoned or drained; VMI deleted anyway at 2026-01-01T10:10:00Z";
  static final String CORDONED = "Cordoned guest node vm-a-node in cluster t/guest";
  static final String SHORTENED =
      "Deadline moved earlier to 2026-01-01T10:04:00Z by Machine t/m node drain timeout 4m from"
          + " start 2026-01-01T10:00:00Z (shorter than --drain-timeout; it never moves later)";
  static final String PASSED =
      "Guest node not drained by 2026-01-01T10:10:00Z (drain timeout 10m0s from start"
          + " 2026-01-01T10:00:00Z); deleting the VMI anyway. Still blocking: app/db-pdb";

  static VirtualMachineInstance marked() {
    return new VirtualMachineInstance()
        .metadata(
            new V1ObjectMeta()
                .namespace("t")
                .name("vm-a")
                .uid("uid-a")
                .labels(
                    new HashMap<>(
                        Map.of(CapkLabels.CLUSTER_NAME, "guest", CapkLabels.ROLE, "worker")))
                .annotations(new HashMap<>()))
        .status(new VirtualMachineInstanceStatus().evacuationNodeName("infra-1").phase("Running"));
  }

  static VirtualMachineInstance started() {
    VirtualMachineInstance v = marked();
    v.getMetadata().getAnnotations().put(EvictionAnnotations.DRAIN_START_TIME, START.toString());
    return v;
  }

  /** Started, in the phase the controller recorded. */
  static VirtualMachineInstance in(EvacuationPhase phase) {
    VirtualMachineInstance v = started();
    v.getMetadata().getAnnotations().put(EvictionAnnotations.EVACUATION_PHASE, phase.name());
    return v;
  }

  static VirtualMachineInstance admitted() {
    return in(EvacuationPhase.Draining);
  }

  static VirtualMachineInstance deleting() {
    VirtualMachineInstance v = admitted();
    v.getMetadata().setDeletionTimestamp(OffsetDateTime.parse("2026-01-01T10:04:59Z"));
    return v;
  }

  static VirtualMachineInstance withPhase(String raw) {
    VirtualMachineInstance v = started();
    v.getMetadata().getAnnotations().put(EvictionAnnotations.EVACUATION_PHASE, raw);
    return v;
  }

  static VmiEvent at(String time, String reason, String message) {
    return new VmiEvent("uid-a", reason, message, Instant.parse("2026-01-01T" + time + "Z"));
  }

  static Stream<Arguments> phases() {
    return Stream.of(
        Arguments.of(
            "marked, no drain start yet", marked(), List.of(), NOW, EvacuationPhase.Pending, null),
        Arguments.of(
            "started, no event yet", started(), List.of(), NOW, EvacuationPhase.Draining, null),
        Arguments.of(
            "admitted: draining, the budget names the blocker",
            admitted(),
            List.of(
                at("10:01:00", "EvacuationHeld", HELD), at("10:02:00", "DrainBlocked", BLOCKED)),
            NOW,
            EvacuationPhase.Draining,
            "DrainBlocked"),
        Arguments.of(
            "recorded draining: a hold event before it does not make it held",
            admitted(),
            List.of(at("10:04:00", "EvacuationHeld", HELD)),
            NOW,
            EvacuationPhase.Draining,
            null),
        Arguments.of(
            "recorded held: the hold names the blocker, not a later guest failure",
            in(EvacuationPhase.Held),
            List.of(
                at("10:01:00", "EvacuationHeld", HELD),
                at("10:03:00", "GuestAPIUnavailable", "down")),
            NOW,
            EvacuationPhase.Held,
            "EvacuationHeld"),
        Arguments.of(
            "recorded paused",
            in(EvacuationPhase.Paused),
            List.of(at("10:03:00", "ClusterPaused", PAUSED)),
            NOW,
            EvacuationPhase.Paused,
            "ClusterPaused"),
        Arguments.of(
            "recorded migrating: the migration's event",
            in(EvacuationPhase.Migrating),
            List.of(at("10:01:00", "MigrationStarted", "Live-migrating off infra node infra-1")),
            NOW,
            EvacuationPhase.Migrating,
            "MigrationStarted"),
        Arguments.of(
            "no phase recorded (an older controller): draining, whatever the events",
            started(),
            List.of(at("10:03:00", "EvacuationHeld", HELD)),
            NOW,
            EvacuationPhase.Draining,
            null),
        Arguments.of(
            "an unknown recorded phase counts as draining",
            withPhase("Sleeping"),
            List.of(at("10:02:00", "DrainBlocked", BLOCKED)),
            NOW,
            EvacuationPhase.Draining,
            "DrainBlocked"),
        Arguments.of(
            "a recorded phase past the deadline: the deadline wins",
            in(EvacuationPhase.Held),
            List.of(at("10:01:00", "EvacuationHeld", HELD)),
            Instant.parse("2026-01-01T10:10:00Z"),
            EvacuationPhase.DeadlinePassed,
            null),
        Arguments.of(
            "a hold of an earlier evacuation does not count",
            in(EvacuationPhase.Held),
            List.of(at("09:50:00", "EvacuationHeld", HELD)),
            NOW,
            EvacuationPhase.Held,
            null),
        Arguments.of(
            "a guest failure blocks a draining VMI",
            admitted(),
            List.of(
                at("10:02:00", "DrainBlocked", BLOCKED),
                at("10:03:00", "GuestAPIUnavailable", "guest API down; retrying")),
            NOW,
            EvacuationPhase.Draining,
            "GuestAPIUnavailable"),
        Arguments.of(
            "a cordon is progress, not a blocker",
            admitted(),
            List.of(
                at("10:02:00", "DrainBlocked", BLOCKED),
                at("10:03:00", "GuestNodeCordoned", CORDONED)),
            NOW,
            EvacuationPhase.Draining,
            "DrainBlocked"),
        Arguments.of(
            "past the deadline: the last blocker",
            admitted(),
            List.of(at("10:02:00", "DrainBlocked", BLOCKED)),
            Instant.parse("2026-01-01T10:10:00Z"),
            EvacuationPhase.DeadlinePassed,
            "DrainBlocked"),
        Arguments.of(
            "past the deadline: the controller's own word",
            admitted(),
            List.of(
                at("10:02:00", "DrainBlocked", BLOCKED),
                at("10:10:00", "DrainDeadlinePassed", PASSED)),
            Instant.parse("2026-01-01T10:10:01Z"),
            EvacuationPhase.DeadlinePassed,
            "DrainDeadlinePassed"),
        Arguments.of(
            "being deleted",
            deleting(),
            List.of(at("10:02:00", "DrainBlocked", BLOCKED)),
            NOW,
            EvacuationPhase.WaitingForRecreate,
            null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("phases")
  void phaseIsTheRecordedOneUnlessTheVmiSaysMoreAndTheBlockerTheLatestEventOfIt(
      String row,
      VirtualMachineInstance vmi,
      List<VmiEvent> events,
      Instant now,
      EvacuationPhase phase,
      String blockerReason) {
    List<EvacuationStatus> s = EvacuationStatuses.of(List.of(vmi), events, now, TIMEOUT);
    assertEquals(1, s.size(), row);
    assertEquals(phase, s.get(0).phase(), row);
    assertEquals(
        Optional.ofNullable(blockerReason), s.get(0).blockedBy().map(VmiEvent::reason), row);
  }

  @Test
  void onlyVmisMarkedOrBeingDeletedAfterADrainStartAreListed() {
    VirtualMachineInstance running = marked();
    running.getStatus().setEvacuationNodeName(null);
    VirtualMachineInstance deletedWithoutEvacuation = marked();
    deletedWithoutEvacuation.getStatus().setEvacuationNodeName(null);
    deletedWithoutEvacuation
        .getMetadata()
        .setDeletionTimestamp(OffsetDateTime.parse("2026-01-01T10:00:00Z"));
    VirtualMachineInstance recreating = deleting();
    recreating.getStatus().setEvacuationNodeName(null);
    recreating.getMetadata().setName("vm-b");
    List<EvacuationStatus> s =
        EvacuationStatuses.of(
            List.of(running, deletedWithoutEvacuation, recreating), List.of(), NOW, TIMEOUT);
    assertEquals(List.of("vm-b"), s.stream().map(EvacuationStatus::name).toList());
  }

  @Test
  void deadlineIsStartPlusTimeoutUnlessTheGraceTimeOrClusterApiSaidEarlier() {
    EvacuationStatus plain = single(admitted(), List.of());
    assertEquals(Instant.parse("2026-01-01T10:10:00Z"), plain.deadline().orElseThrow().at());
    assertEquals("--drain-timeout 10m0s", plain.deadline().orElseThrow().source());
    assertEquals(Optional.of(Duration.ofMinutes(5)), plain.timeLeft());

    VirtualMachineInstance graced = admitted();
    graced
        .getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.CAPK_DELETION_GRACE_TIME, "2026-01-01T10:08:00Z");
    EvacuationStatus grace = single(graced, List.of());
    assertEquals(Instant.parse("2026-01-01T10:08:00Z"), grace.deadline().orElseThrow().at());
    assertEquals(
        "annotation capk.cluster.x-k8s.io/vmi-deletion-grace-time",
        grace.deadline().orElseThrow().source());

    VirtualMachineInstance late = admitted();
    late.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.CAPK_DELETION_GRACE_TIME, "2026-01-01T11:00:00Z");
    assertEquals(
        Instant.parse("2026-01-01T10:10:00Z"),
        single(late, List.of()).deadline().orElseThrow().at(),
        "a later grace time never lifts the timeout");

    EvacuationStatus shortened =
        single(admitted(), List.of(at("10:00:01", "DrainDeadlineShortened", SHORTENED)));
    assertEquals(Instant.parse("2026-01-01T10:04:00Z"), shortened.deadline().orElseThrow().at());
    assertEquals(
        "Machine t/m node drain timeout 4m from start 2026-01-01T10:00:00Z",
        shortened.deadline().orElseThrow().source());
    assertEquals(EvacuationPhase.DeadlinePassed, shortened.phase());
    assertEquals(Optional.of(Duration.ofMinutes(-1)), shortened.timeLeft());
  }

  @Test
  void guestNodeIsTheOneTheLatestEventNamesAndEventsOfOtherVmisDoNotCount() {
    VmiEvent otherVmi =
        new VmiEvent("uid-other", "DrainBlocked", BLOCKED.replace("vm-a", "vm-z"), NOW);
    EvacuationStatus s =
        single(
            admitted(),
            List.of(
                at("10:01:00", "GuestNodeCordoned", CORDONED),
                at("10:02:00", "DrainBlocked", BLOCKED),
                otherVmi));
    assertEquals(Optional.of("vm-a"), s.guestNode());
    assertEquals(BLOCKED, s.blockedBy().orElseThrow().message());
    assertEquals("guest", s.cluster());
    assertEquals("infra-1", s.infraNode());
    assertEquals(Optional.empty(), single(started(), List.of()).guestNode());
  }

  @Test
  void theMostUrgentComesFirst() {
    VirtualMachineInstance later = admitted();
    later.getMetadata().setName("vm-late");
    later.getMetadata().setUid("uid-late");
    later.getMetadata().getAnnotations().put(EvictionAnnotations.DRAIN_START_TIME, NOW.toString());
    VirtualMachineInstance pending = marked();
    pending.getMetadata().setName("vm-pending");
    List<EvacuationStatus> s =
        EvacuationStatuses.of(List.of(pending, later, admitted()), List.of(), NOW, TIMEOUT);
    assertEquals(
        List.of("vm-a", "vm-late", "vm-pending"), s.stream().map(EvacuationStatus::name).toList());
  }

  static EvacuationStatus single(VirtualMachineInstance vmi, List<VmiEvent> events) {
    List<EvacuationStatus> s = EvacuationStatuses.of(List.of(vmi), events, NOW, TIMEOUT);
    assertEquals(1, s.size());
    return s.get(0);
  }
}
