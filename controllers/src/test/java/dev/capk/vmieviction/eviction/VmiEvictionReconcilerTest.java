package dev.capk.vmieviction.eviction;

import static dev.capk.vmieviction.eviction.TestVmis.node;
import static dev.capk.vmieviction.eviction.TestVmis.vmi;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.KubeVirtList;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigrationList;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.Evacuator.EvacuationDeadline;
import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import dev.capk.vmieviction.eviction.Guest.DrainPass;
import dev.capk.vmieviction.eviction.Guest.MarkedNodes;
import dev.capk.vmieviction.eviction.MachineContractCheck.MachineContract;
import dev.capk.vmieviction.eviction.VmiEvents.Told;
import dev.capk.vmieviction.kube.Samples;
import dev.capk.vmieviction.workload.CachedObjects;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.CreateOptions;
import io.kubernetes.client.util.generic.options.DeleteOptions;
import io.kubernetes.client.util.generic.options.ListOptions;
import io.kubernetes.client.util.generic.options.PatchOptions;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The reconciler's orchestration against in-memory fakes: no network, no real time. */
class VmiEvictionReconcilerTest {

  static final Instant T0 = Instant.parse("2025-03-01T12:00:00Z");
  static final Duration TIMEOUT = Duration.ofMinutes(10);
  static final Duration RETRY = Duration.ofSeconds(20);

  MutableClock clock;
  FakeVmis vmis;
  FakeGuest guest;
  FakeEvents events;
  List<String> connects;
  List<Optional<Duration>> connectBounds;
  GuestAccessException connectFailure;

  /** The KubeVirt CR list's answer; null: no answer at all (the connection failed). */
  KubernetesApiResponse<KubeVirtList> kubevirtCr;

  int clusterDefaultReads;

  /** What the management objects say; by default all known and nothing applies. */
  MachineContract.Facts facts;

  GuestAccessException factsFailure;
  int factReads;
  VmiEvictionReconciler reconciler;
  PrometheusRegistry registry;

  /** VMIs the reconciler asked to look at now (namespace/name), in order. */
  List<String> woken;

  GuestClusters connector;

  @BeforeEach
  void setUp() {
    clock = new MutableClock(T0);
    vmis = new FakeVmis();
    guest = new FakeGuest();
    events = new FakeEvents();
    connects = new ArrayList<>();
    connectBounds = new ArrayList<>();
    kubevirtCr = NO_KUBEVIRT_CR;
    facts = facts(false, false, null, null);
    woken = new ArrayList<>();
    connector =
        new GuestClusters(null, null, null, key -> {}, RETRY) {
          @Override
          public Guest connect(VirtualMachineInstance vmi, Optional<Duration> timeLeft)
              throws GuestAccessException {
            connects.add(vmi.getMetadata().getName());
            connectBounds.add(timeLeft);
            if (connectFailure != null) {
              throw connectFailure;
            }
            return guest;
          }
        };
    reconciler =
        reconciler(
            settings(
                EvacuationLimit.UNLIMITED,
                EvictionSettings.DEFAULT_DRAIN_RESERVE,
                LiveMigrationPolicy.NEVER,
                EvictionSettings.DEFAULT_MIGRATION_ATTEMPTS));
  }

  /** For a controller that never migrates: nothing exists, nothing may be created. */
  static final GenericKubernetesApi<
          VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationList>
      NO_MIGRATIONS = migrations(null);

  /**
   * A migration API where none of ours exists and each create lands in {@code created}; with null,
   * every create is refused (403).
   */
  static GenericKubernetesApi<VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationList>
      migrations(List<String> created) {
    return new GenericKubernetesApi<>(
        VirtualMachineInstanceMigration.class,
        VirtualMachineInstanceMigrationList.class,
        "kubevirt.io",
        "v1",
        "virtualmachineinstancemigrations",
        new ApiClient()) {
      @Override
      public KubernetesApiResponse<VirtualMachineInstanceMigrationList> list(ListOptions o) {
        return new KubernetesApiResponse<>(new VirtualMachineInstanceMigrationList());
      }

      @Override
      public KubernetesApiResponse<VirtualMachineInstanceMigration> create(
          VirtualMachineInstanceMigration m, CreateOptions o) {
        if (created == null) {
          return new KubernetesApiResponse<>(
              new V1Status().message("live migrations are not wired in this controller"), 403);
        }
        created.add(m.getMetadata().getName());
        return new KubernetesApiResponse<>(m);
      }

      @Override
      public KubernetesApiResponse<VirtualMachineInstanceMigration> delete(String ns, String name) {
        return new KubernetesApiResponse<>(new V1Status(), 404);
      }
    };
  }

  static final KubernetesApiResponse<KubeVirtList> NO_KUBEVIRT_CR =
      KubeVirtClusterDefaultsTest.list("{\"items\":[]}");

  /** The strategy {@code strategy} set in the KubeVirt CR. */
  static KubernetesApiResponse<KubeVirtList> kubevirtCr(String strategy) {
    return KubeVirtClusterDefaultsTest.list(
        "{\"items\":[{\"spec\":{\"configuration\":{\"evictionStrategy\":\"" + strategy + "\"}}}]}");
  }

  /** The real defaults over {@link #kubevirtCr}, read on every call while answered. */
  ClusterDefaults clusterDefaults() {
    return new ClusterDefaults(
        () -> {
          clusterDefaultReads++;
          if (kubevirtCr == null) {
            throw new IllegalStateException("connection refused");
          }
          return kubevirtCr;
        },
        Duration.ZERO,
        clock);
  }

  /** After a failed first read the CR is read again {@link ClusterDefaults#FIRST_RETRY} later. */
  void kubevirtCrReadAgainAs(KubernetesApiResponse<KubeVirtList> answer) {
    kubevirtCr = answer;
    clock.now = clock.now.plus(ClusterDefaults.FIRST_RETRY);
  }

  /** A fresh contract check (as a restarted controller has) that reads {@link #facts}. */
  MachineContractCheck contracts() {
    return new MachineContractCheck(
        new ApiClient(), "v1beta1", null, new MachineContractCheck.Cached(none(), none(), none())) {
      @Override
      MachineContract.Facts read(VirtualMachineInstance vmi) throws GuestAccessException {
        factReads++;
        if (factsFailure != null) {
          throw factsFailure;
        }
        return facts;
      }
    };
  }

  static <T> CachedObjects<T> none() {
    return (ns, name) -> Optional.empty();
  }

  /** A reconciler whose metrics are in a fresh {@link #registry}. */
  VmiEvictionReconciler reconciler(EvictionSettings settings) {
    registry = new PrometheusRegistry();
    return new VmiEvictionReconciler(
        vmis.infra,
        clusterDefaults(),
        connector,
        contracts(),
        NO_MIGRATIONS,
        events,
        new EvictionMetrics(registry),
        settings,
        clock,
        woken::add,
        vmi -> Optional.empty());
  }

  Result reconcile(String name) {
    return reconciler.reconcile(new Request("tenant-a", name));
  }

  VirtualMachineInstance evacuating(String name) {
    return vmis.put(vmi(name, "External", "infra-1"));
  }

  static void assertRequeueWithin(Result r, Duration max) {
    assertTrue(r.isRequeue(), "requeue expected: " + r);
    assertTrue(
        r.getRequeueAfter() != null && r.getRequeueAfter().compareTo(max) <= 0,
        "requeue " + r + " later than " + max);
  }

  @Test
  void drainedGuestNodeLeadsToCordonDrainAndVmiDeletionWithUidPrecondition() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", "kubevirt://vm-1", false, "True"));
    guest.passes.add(complete());

    Result r = reconcile("vm-1");

    assertFalse(r.isRequeue());
    assertEquals(
        "2025-03-01T12:00:00Z", vmis.annotations.get(EvictionAnnotations.DRAIN_START_TIME));
    assertEquals(List.of("cordon vm-1 for uid-vm-1", "drain vm-1"), guest.calls);
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    // One event tells both the drain and the deletion: a straight evacuation's writes stay few.
    assertEquals(
        List.of(VmiEvents.DRAIN_STARTED, VmiEvents.CORDONED, VmiEvents.DRAIN_SUCCEEDED),
        events.reasons());
    String drained = events.message("Normal", VmiEvents.DRAIN_SUCCEEDED);
    assertTrue(
        drained.endsWith("; VMI deleted so that KubeVirt recreates it on another node"), drained);
  }

  @Test
  void laterStepsOfADrainFindTheNodeAsTheirCordonLeftItAndDoNotCordonAgain() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", "kubevirt://vm-1", false, "True"));
    guest.passes.add(blocked("shop/web-0", "web-pdb"));
    guest.passes.add(complete());

    assertTrue(reconcile("vm-1").isRequeue());
    assertFalse(reconcile("vm-1").isRequeue());

    // The admission tells the role by the node (no role label), then each step finds it in the
    // node's watch: GuestNodeWatchIT counts one list and no GET per evacuation.
    assertEquals(3, guest.nodeReads);
    assertEquals(
        List.of("cordon vm-1 for uid-vm-1", "drain vm-1", "drain vm-1"),
        guest.calls,
        "cordoned once: the second step knows it cordoned the node");
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
  }

  @Test
  void aStepThatItsTenantsThrottleDoesNotAdmitTouchesNothingAndComesBackWhenTold() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", "kubevirt://vm-1", false, "True"));
    guest.throttledFor = Duration.ofMillis(300);

    Result r = reconcile("vm-1");

    assertEquals(new Result(true, Duration.ofMillis(300)), r);
    assertEquals(List.of(), guest.calls, "no cordon, no drain while throttled");
    assertEquals(0, guest.stepsLeft, "a step never admitted does not leave");
    assertTrue(vmis.deletedUids.isEmpty());
  }

  @Test
  void everyAdmittedStepLeavesItsTenantsThrottleAlsoWhenItFails() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", "kubevirt://vm-1", false, "True"));
    guest.drainFailure =
        new GuestAccessException(GuestAccessException.Reason.GuestAPIUnavailable, "down");
    reconcile("vm-1");
    guest.drainFailure = null;
    guest.passes.add(complete());
    reconcile("vm-1");

    assertTrue(guest.stepsEntered >= 2, "two drain steps at least");
    assertEquals(guest.stepsEntered, guest.stepsLeft, "each step that entered left");
  }

  @Test
  void anUnfinishedDrainComesBackWhenItsNextEvictionIsDueNotAfterAFixedPause() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", "kubevirt://vm-1", false, "True"));
    guest.passes.add(
        DrainPassTest.pass(
            false,
            0,
            1,
            Map.of("ns/p", Set.of("ns/pdb")),
            List.of(),
            List.of(),
            "1 pending",
            0,
            Optional.of(clock.instant().plusSeconds(5)),
            Map.of()));

    Result r = reconcile("vm-1");

    assertEquals(new Result(true, Duration.ofSeconds(5)), r);
  }

  @Test
  void aDrainThatOnlyWaitsForPodsToTerminateReliesOnTheWatchAndPollsOnlyAtTheRetryInterval() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", "kubevirt://vm-1", false, "True"));
    guest.passes.add(
        DrainPassTest.pass(
            false,
            2,
            1,
            Map.of(),
            List.of(),
            List.of(),
            "1 pending",
            1,
            Optional.empty(),
            Map.of()));

    Result r = reconcile("vm-1");

    assertEquals(new Result(true, RETRY), r);
    assertFalse(
        events.reasons().contains(VmiEvents.DRAIN_BLOCKED),
        "a pod taking its time to terminate right after its eviction is no warning");
  }

  @Test
  void guestRequestsOfAnEvacuationAreBoundedByTheTimeLeftBeforeTheDeadline() {
    VirtualMachineInstance v = evacuating("vm-1");
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2025-03-01T11:58:00Z");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));

    reconcile("vm-1");

    // Every guest connection of the step (the admit step may read the guest node's role too).
    assertEquals(
        List.of(Optional.of(TIMEOUT.minusMinutes(2))), connectBounds.stream().distinct().toList());
  }

  @Test
  void pastTheDeadlineTheVmiIsDeletedBeforeAnyGuestAccess() {
    VirtualMachineInstance v = evacuating("vm-1");
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2025-03-01T11:49:00Z");

    Result r = reconcile("vm-1");

    assertFalse(r.isRequeue());
    assertEquals(List.of(), connects, "no guest access once the deadline passed");
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertTrue(events.has("Warning", VmiEvents.DEADLINE_PASSED));
  }

  @Test
  void blockedDrainRequeuesAtTheRetryIntervalThenTheDeadlineDeletesAndNamesTheBudget() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));

    Result first = reconcile("vm-1");
    assertEquals(new Result(true, RETRY), first);
    assertTrue(vmis.deletedUids.isEmpty());
    assertFalse(
        events.has("Warning", VmiEvents.DRAIN_BLOCKED),
        "a budget refusing for a moment is a drain's normal course, as with kubectl");

    // Near the deadline the requeue is cut to it, and the refusal is worth a warning now.
    clock.now = T0.plus(TIMEOUT).minusSeconds(5);
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    Result second = reconcile("vm-1");
    assertRequeueWithin(second, Duration.ofSeconds(5).plus(EvacuationDeadline.DEADLINE_MARGIN));
    assertTrue(vmis.deletedUids.isEmpty(), "not deleted before the deadline");
    assertTrue(events.has("Warning", VmiEvents.DRAIN_BLOCKED));

    clock.now = T0.plus(TIMEOUT);
    int connectsBefore = connects.size();
    Result third = reconcile("vm-1");
    assertFalse(third.isRequeue());
    assertEquals(connectsBefore, connects.size());
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    String warning = events.message("Warning", VmiEvents.DEADLINE_PASSED);
    assertTrue(warning.contains("guest-ns/db-pdb"), warning);
  }

  @Test
  void missingClusterIsEventedAndRequeuedButTheDeadlineStillFires() {
    evacuating("vm-1");
    connectFailure =
        new GuestAccessException(
            GuestAccessException.Reason.ClusterNotFound, "Cluster tenant-a/guest not found");

    Result r = reconcile("vm-1");
    assertRequeueWithin(r, TIMEOUT);
    assertTrue(events.has("Warning", "ClusterNotFound"));

    clock.now = T0.plus(TIMEOUT).minusSeconds(2);
    Result capped = reconcile("vm-1");
    assertRequeueWithin(capped, Duration.ofSeconds(2).plus(EvacuationDeadline.DEADLINE_MARGIN));

    clock.now = T0.plus(TIMEOUT).plusMillis(1);
    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertTrue(events.message("Warning", VmiEvents.DEADLINE_PASSED).contains("not found"));
  }

  @Test
  void failureBackoffGrowsButNeverPassesTheDeadline() {
    evacuating("vm-1");
    connectFailure =
        new GuestAccessException(GuestAccessException.Reason.GuestAPIUnavailable, "guest down");
    List<Duration> delays = new ArrayList<>();
    while (vmis.deletedUids.isEmpty()) {
      Result r = reconcile("vm-1");
      if (!r.isRequeue()) {
        break;
      }
      assertRequeueWithin(
          r,
          Duration.between(clock.now, T0.plus(TIMEOUT)).plus(EvacuationDeadline.DEADLINE_MARGIN));
      delays.add(r.getRequeueAfter());
      clock.now = clock.now.plus(r.getRequeueAfter());
    }
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertTrue(delays.get(1).compareTo(delays.get(0)) > 0, "backoff grows: " + delays);
    assertTrue(
        delays.stream().allMatch(d -> d.compareTo(Duration.ofMinutes(1)) <= 0),
        "backoff bounded: " + delays);
  }

  @Test
  void recordedStartTimeIsKeptAcrossRestarts() {
    VirtualMachineInstance v = evacuating("vm-1");
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2025-03-01T11:55:00Z");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("ns/p", "ns/pdb"));

    reconcile("vm-1");

    assertFalse(
        vmis.annotations.containsKey(EvictionAnnotations.DRAIN_START_TIME),
        "a valid start time is never rewritten");
    assertFalse(events.has("Normal", VmiEvents.DRAIN_STARTED));
    // Started by a controller that recorded no phase: recorded once, alone.
    assertEquals(1, vmis.patches);
    assertEquals("Draining", vmis.annotations.get(EvictionAnnotations.EVACUATION_PHASE));
    reconcile("vm-1");
    assertEquals(1, vmis.patches, "a phase unchanged is not written again");
  }

  private double phaseGauge(String phase) {
    return Samples.value(
        registry,
        "vmi_eviction_evacuations_by_phase",
        new String[] {"phase"},
        new String[] {phase});
  }

  @Test
  void aNewEvacuationRecordsItsStartAndItsDrainingPhaseInOnePatch() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("ns/p", "ns/pdb"));

    reconcile("vm-1");

    assertEquals(1, vmis.patches);
    assertEquals(
        DrainStartTime.format(T0), vmis.annotations.get(EvictionAnnotations.DRAIN_START_TIME));
    assertEquals("Draining", vmis.annotations.get(EvictionAnnotations.EVACUATION_PHASE));
    assertEquals(1.0, phaseGauge("Draining"));

    clock.now = T0.plus(TIMEOUT);
    reconcile("vm-1");
    assertEquals(0.0, phaseGauge("Draining"), "deleted at the deadline: no longer counted");
  }

  @Test
  void malformedStartTimeIsReplacedWithAWarning() {
    VirtualMachineInstance v = evacuating("vm-1");
    v.getMetadata().getAnnotations().put(EvictionAnnotations.DRAIN_START_TIME, "not-a-time");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("ns/p", "ns/pdb"));

    reconcile("vm-1");

    assertEquals(
        "2025-03-01T12:00:00Z", vmis.annotations.get(EvictionAnnotations.DRAIN_START_TIME));
    assertTrue(events.message("Warning", Told.START_INVALID.reason).contains("not-a-time"));
  }

  /**
   * Evacuation of vm-1 under way since T0, its drain blocked; then someone edits the annotation.
   */
  VirtualMachineInstance blockedSinceT0() {
    VirtualMachineInstance v = evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    for (int i = 0; i < 5; i++) {
      guest.passes.add(blocked("ns/p", "ns/pdb"));
    }
    reconcile("vm-1");
    assertEquals(
        "2025-03-01T12:00:00Z",
        v.getMetadata().getAnnotations().get(EvictionAnnotations.DRAIN_START_TIME));
    return v;
  }

  void assertRestoredAndDeletedAtTheOriginalDeadline(
      VirtualMachineInstance v, String tamperingPhrase) {
    clock.now = T0.plusSeconds(90);
    reconcile("vm-1");
    assertEquals(
        "2025-03-01T12:00:00Z",
        v.getMetadata().getAnnotations().get(EvictionAnnotations.DRAIN_START_TIME),
        "the earliest start is written back");
    String warning = events.message("Warning", Told.START_RESTORED.reason);
    assertTrue(
        warning.contains(tamperingPhrase) && warning.contains("2025-03-01T12:10:00Z"), warning);
    assertFalse(events.has("Warning", Told.START_INVALID.reason), "not a new evacuation");

    clock.now = T0.plus(TIMEOUT).minusSeconds(1);
    reconcile("vm-1");
    assertTrue(vmis.deletedUids.isEmpty(), "not before the original deadline");
    clock.now = T0.plus(TIMEOUT);
    reconcile("vm-1");
    assertEquals(
        List.of("uid-vm-1"), vmis.deletedUids, "deleted at the original deadline, not a later one");
  }

  @Test
  void drainStartMovedLaterMidDrainIsRestoredAndTheOriginalDeadlineHolds() {
    VirtualMachineInstance v = blockedSinceT0();
    clock.now = T0.plusSeconds(60);
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2025-03-01T12:01:00Z");
    assertRestoredAndDeletedAtTheOriginalDeadline(
        v, "was moved later (to \"2025-03-01T12:01:00Z\")");
  }

  @Test
  void drainStartRemovedMidDrainIsRestoredAndTheOriginalDeadlineHolds() {
    VirtualMachineInstance v = blockedSinceT0();
    v.getMetadata().getAnnotations().remove(EvictionAnnotations.DRAIN_START_TIME);
    assertRestoredAndDeletedAtTheOriginalDeadline(v, "was removed");
  }

  @Test
  void drainStartMadeMalformedMidDrainIsRestoredAndTheOriginalDeadlineHolds() {
    VirtualMachineInstance v = blockedSinceT0();
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2099-01-01T00:00:00Z");
    assertRestoredAndDeletedAtTheOriginalDeadline(v, "was made unusable");
  }

  @Test
  void anEarlierDrainStartMidDrainIsAcceptedAndBringsTheDeadlineForward() {
    VirtualMachineInstance v = blockedSinceT0();
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2025-03-01T11:55:00Z");
    int patches = vmis.patches;

    clock.now = T0.plus(TIMEOUT).minusSeconds(300);
    reconcile("vm-1");

    assertEquals(patches, vmis.patches, "an earlier start is kept as it is");
    assertFalse(events.has("Warning", Told.START_RESTORED.reason));
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids, "deleted at the earlier deadline");
  }

  @Test
  void aRestoreThatConflictsIsRetriedSoonWithoutAWarning() {
    VirtualMachineInstance v = blockedSinceT0();
    v.getMetadata().getAnnotations().remove(EvictionAnnotations.DRAIN_START_TIME);
    vmis.conflictsLeft = 1;

    assertEquals(new Result(true, VmiEvictionReconciler.CONFLICT_RETRY), reconcile("vm-1"));
    assertFalse(
        events.has("Warning", Told.START_RESTORED.reason),
        "a 409 means our cache was stale: nothing to warn about yet");
  }

  @Test
  void aVmiLeftToKubeVirtByTheFallbackStrategyIsToldOnceWhyAndHowToOptIn() {
    vmis.put(vmi("vm-1", null, "infra-1"));
    vmis.put(vmi("vm-quiet", null, null));

    for (int i = 0; i < 3; i++) {
      assertEquals(VmiEvictionReconciler.DONE, reconcile("vm-1"));
      assertEquals(VmiEvictionReconciler.DONE, reconcile("vm-quiet"));
    }

    assertEquals(
        List.of(Told.LEFT_TO_KUBEVIRT.reason),
        events.reasons(),
        "one event per VMI UID, none when not marked");
    Event told = events.list.get(0);
    assertEquals("Normal", told.type());
    assertTrue(
        told.message().contains("--default-eviction-strategy=None")
            && told.message().contains("evictionStrategy: External"),
        told.message());
    assertEquals(List.of(), connects);

    // A VMI whose own strategy says None chose it: nothing to explain.
    vmis.put(vmi("vm-none", "None", "infra-1"));
    reconcile("vm-none");
    assertEquals(1, events.list.size());
  }

  @Test
  void theDeadlineWarningCountsThePodsLeftEvenWhenTheLastStepFailed() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(
        DrainPassTest.pass(
            false,
            0,
            2,
            Map.of(),
            List.of("ns/a: two budgets", "ns/b: two budgets"),
            List.of(),
            "2 failed",
            0,
            Optional.empty(),
            Map.of()));
    reconcile("vm-1");
    assertTrue(events.message("Warning", VmiEvents.DRAIN_BLOCKED).contains("(2 pod(s) left)"));

    guest.drainFailure =
        new GuestAccessException(
            GuestAccessException.Reason.GuestAPIUnavailable, "guest API timed out");
    clock.now = T0.plusSeconds(60);
    reconcile("vm-1");
    clock.now = T0.plus(TIMEOUT);
    reconcile("vm-1");

    String passed = events.message("Warning", VmiEvents.DEADLINE_PASSED);
    assertTrue(passed.contains("2 pod(s) left") && passed.contains("guest API timed out"), passed);
  }

  @Test
  void theDeadlineWarningNamesEachPodLeftAndWhyNotACount() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(
        DrainPassTest.pass(
            false,
            1,
            2,
            Map.of("shop/web-0", Set.of("shop/web-pdb")),
            List.of(),
            List.of(),
            "1 evicted, 2 pending",
            1,
            Optional.empty(),
            Map.of(
                "shop/cache-0",
                "terminating behind finalizer example.com/keep",
                "shop/web-0",
                "eviction refused by PodDisruptionBudget shop/web-pdb")));
    reconcile("vm-1");
    clock.now = T0.plus(TIMEOUT);
    reconcile("vm-1");

    assertEquals(
        "Guest node not drained by 2025-03-01T12:10:00Z (drain timeout 10m0s from start"
            + " 2025-03-01T12:00:00Z); deleting the VMI anyway. Still blocking: 2 pod(s) left:"
            + " shop/cache-0 (terminating behind finalizer example.com/keep); shop/web-0"
            + " (eviction refused by PodDisruptionBudget shop/web-pdb)",
        events.message("Warning", VmiEvents.DEADLINE_PASSED));
  }

  @Test
  void theDeadlineWarningKeepsTheLastRefusedWriteAfterThePodsLeft() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(
        DrainPassTest.pass(
            false,
            0,
            1,
            Map.of(),
            List.of(),
            List.of(),
            "1 pending",
            1,
            Optional.empty(),
            Map.of("shop/cache-0", "terminating behind finalizer example.com/keep")));
    reconcile("vm-1");
    guest.drainFailure =
        new GuestAccessException(
            GuestAccessException.Reason.GuestAPIForbidden,
            "guest cluster guest: cordoning node vm-1 refused: denied by policy");
    clock.now = T0.plusSeconds(60);
    reconcile("vm-1");
    clock.now = T0.plus(TIMEOUT);
    reconcile("vm-1");

    String passed = events.message("Warning", VmiEvents.DEADLINE_PASSED);
    assertTrue(
        passed.endsWith(
            "Still blocking: 1 pod(s) left: shop/cache-0 (terminating behind finalizer"
                + " example.com/keep); then guest cluster guest: cordoning node vm-1 refused:"
                + " denied by policy"),
        passed);
  }

  @Test
  void aNewEvacuationStartsWhenItsMarkWasSeenNotWhenAWorkerGotToIt() {
    VirtualMachineInstance marked = evacuating("vm-1");
    List<String> queued = new ArrayList<>();
    var handler =
        reconciler.markSightings(
            new io.kubernetes.client.informer.ResourceEventHandler<>() {
              @Override
              public void onAdd(VirtualMachineInstance vmi) {
                queued.add("add " + vmi.getMetadata().getName());
              }

              @Override
              public void onUpdate(VirtualMachineInstance old, VirtualMachineInstance vmi) {
                queued.add("update " + vmi.getMetadata().getName());
              }

              @Override
              public void onDelete(VirtualMachineInstance vmi, boolean unknown) {
                queued.add("delete " + vmi.getMetadata().getName());
              }
            });
    clock.now = T0.plusMillis(200);
    handler.onUpdate(marked, marked);
    // A slow step of another kind held the VMI: the worker comes 12 s after the mark was seen.
    clock.now = T0.plusSeconds(12);
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("shop/web-0", "web-pdb"));
    reconcile("vm-1");

    assertEquals(List.of("update vm-1"), queued, "the event still reaches the work queue");
    assertEquals(
        "2025-03-01T12:00:00Z",
        vmis.annotations.get(EvictionAnnotations.DRAIN_START_TIME),
        "the start is the mark's first sighting, at second precision");
    assertTrue(
        events.message("Normal", VmiEvents.DRAIN_STARTED).endsWith("2025-03-01T12:10:00Z"),
        events.message("Normal", VmiEvents.DRAIN_STARTED));
  }

  @Test
  void aMarkClearedAndSetAgainStartsFromItsNewSighting() {
    VirtualMachineInstance marked = evacuating("vm-1");
    StepContext sightings = reconciler.c;
    sightings.seen(marked);
    VirtualMachineInstance cleared = vmi("vm-1", "External", null);
    clock.now = T0.plusSeconds(30);
    sightings.seen(cleared);
    assertEquals(Optional.empty(), sightings.firstSeen("uid-vm-1"), "forgotten with the mark");
    clock.now = T0.plusSeconds(40);
    sightings.seen(marked);
    clock.now = T0.plusSeconds(50);
    sightings.seen(marked);
    assertEquals(Optional.of(T0.plusSeconds(40)), sightings.firstSeen("uid-vm-1"));
    sightings.gone(marked);
    assertEquals(Optional.empty(), sightings.firstSeen("uid-vm-1"), "forgotten with the VMI");
  }

  @Test
  void missingGuestNodeCountsAsDrained() {
    evacuating("vm-1");
    guest.node = Optional.empty();

    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertTrue(events.has("Normal", Told.NODE_NOT_FOUND.reason));
    assertFalse(guest.calls.stream().anyMatch(c -> c.startsWith("drain")));
  }

  @Test
  void nodeAnAdminCordonedIsDrainedButNotMarkedAsOurs() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, true, "True"));
    guest.passes.add(complete());

    reconcile("vm-1");

    assertEquals(List.of("drain vm-1"), guest.calls);
  }

  @Test
  void unreachableGuestNodeIsDrainedWithSkipWaitForDeletedPods() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "Unknown"));
    guest.passes.add(complete());

    reconcile("vm-1");

    assertTrue(guest.lastUnreachable);
  }

  @Test
  void drainPassNeverRunsPastTheDeadline() {
    VirtualMachineInstance v = evacuating("vm-1");
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2025-03-01T11:50:03Z");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("ns/p", "ns/pdb"));

    reconcile("vm-1");

    assertEquals(Duration.ofSeconds(3), guest.lastTimeout);
  }

  @Test
  void otherStrategiesAndQuietVmisAreUntouched() {
    vmis.put(vmi("lm", "LiveMigrate", "infra-1"));
    vmis.put(vmi("none", "None", "infra-1"));
    vmis.put(TestVmis.deleting(vmi("gone", "External", "infra-1")));

    for (String name : List.of("lm", "none", "gone", "absent")) {
      assertEquals(VmiEvictionReconciler.DONE, reconcile(name), name);
    }
    assertEquals(List.of(), connects);
    assertEquals(0, vmis.patches);
    assertTrue(vmis.deletedUids.isEmpty());
    assertTrue(events.list.isEmpty());
  }

  @Test
  void unknownStrategyOfAnEvacuatingVmiIsWarnedAboutAndLeftAlone() {
    vmis.put(vmi("odd", "Exterminate", "infra-1"));
    vmis.put(vmi("lower", "external", "infra-1"));
    vmis.put(vmi("odd-quiet", "Exterminate", null));

    for (String name : List.of("odd", "lower", "odd-quiet")) {
      assertEquals(VmiEvictionReconciler.DONE, reconcile(name), name);
    }
    assertEquals(List.of(), connects, "no guest access");
    assertEquals(0, vmis.patches, "no annotation written");
    assertTrue(vmis.deletedUids.isEmpty());
    assertEquals(
        List.of(Told.STRATEGY_UNKNOWN.reason, Told.STRATEGY_UNKNOWN.reason),
        events.reasons(),
        "one warning per evacuating VMI, none for the quiet one");
    assertTrue(
        events.list.get(0).message().contains("\"Exterminate\""), events.list.get(0).message());
    assertEquals("Warning", events.list.get(0).type());
  }

  @Test
  void clusterDefaultExternalAppliesToVmisWithoutAStrategy() {
    vmis.put(vmi("vm-1", null, "infra-1"));
    kubevirtCr = kubevirtCr("External");
    guest.node = Optional.empty();

    reconcile("vm-1");

    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
  }

  @Test
  void aVmiWithoutAStrategyWaitsWhileTheKubeVirtCrIsUnreadableAndIsEvacuatedOnceItIsRead() {
    vmis.put(vmi("vm-1", null, "infra-1"));
    kubevirtCr = KubeVirtClusterDefaultsTest.failure(429, "TooManyRequests", "later");
    guest.node = Optional.empty();

    Result first = reconcile("vm-1");
    Result second = reconcile("vm-1");

    assertTrue(first.isRequeue() && second.isRequeue(), first + " " + second);
    assertTrue(
        second.getRequeueAfter().compareTo(first.getRequeueAfter()) > 0,
        "backoff: " + first + " then " + second);
    assertEquals(List.of(), vmis.deletedUids, "not evacuated on a guess");
    assertFalse(
        events.has("Normal", Told.LEFT_TO_KUBEVIRT.reason),
        "a failed read is not 'no strategy': not left to KubeVirt");
    assertEquals(
        null,
        vmis.annotations.get(EvictionAnnotations.DRAIN_START_TIME),
        "nothing written on a VMI that may not be ours");
    assertEquals(List.of(), connects, "no guest touched");
    String told = events.message("Warning", VmiEvents.KUBEVIRT_CONFIG_UNREADABLE);
    assertTrue(told.contains("HTTP 429") && told.contains("KubeVirt CR"), told);

    kubevirtCrReadAgainAs(kubevirtCr("External"));
    reconcile("vm-1");

    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
  }

  @Test
  void anUnreadableKubeVirtCrThatSaysNothingLeavesTheVmiToKubeVirtOnlyOnceReadAsNotSet() {
    vmis.put(vmi("vm-1", null, "infra-1"));
    kubevirtCr = KubeVirtClusterDefaultsTest.failure(503, "ServiceUnavailable", "down");
    reconcile("vm-1");
    assertFalse(events.has("Normal", Told.LEFT_TO_KUBEVIRT.reason));

    kubevirtCrReadAgainAs(NO_KUBEVIRT_CR); // the answer: no strategy set
    assertEquals(VmiEvictionReconciler.DONE, reconcile("vm-1"));

    assertTrue(events.has("Normal", Told.LEFT_TO_KUBEVIRT.reason));
    assertEquals(List.of(), vmis.deletedUids);
  }

  @Test
  void noLiveMigrationStartsWhileKubeVirtsLimitsAreUnreadableAndTheDrainFollowsAtTheCutoff() {
    List<String> created = new ArrayList<>();
    kubevirtCr = KubeVirtClusterDefaultsTest.failure(429, "TooManyRequests", "later");
    Duration reserve = Duration.ofMinutes(3);
    reconciler =
        new VmiEvictionReconciler(
            vmis.infra,
            clusterDefaults(),
            connector,
            contracts(),
            migrations(created),
            events,
            new EvictionMetrics(new PrometheusRegistry()),
            settings(EvacuationLimit.UNLIMITED, reserve, LiveMigrationPolicy.PREFER, 2),
            clock,
            woken::add,
            vmi -> Optional.empty());
    VirtualMachineInstance v = evacuating("vm-1");
    v.getStatus()
        .conditions(
            List.of(
                new dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus.Condition()
                    .type(
                        dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus
                            .CONDITION_LIVE_MIGRATABLE)
                    .status("True")));
    guest.node = Optional.empty();

    assertTrue(reconcile("vm-1").isRequeue());

    assertEquals(List.of(), created, "no migration started on KubeVirt's defaults");
    assertEquals(List.of(), vmis.deletedUids);
    String told = events.message("Warning", VmiEvents.KUBEVIRT_CONFIG_UNREADABLE);
    assertTrue(told.contains("migration limits") && told.contains("HTTP 429"), told);

    clock.now = T0.plus(TIMEOUT).minus(reserve);
    reconcile("vm-1");

    assertEquals(List.of(), created);
    assertTrue(events.has("Warning", Told.FALLBACK.reason));
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids, "drained (no node) and deleted");
  }

  @Test
  void aVmiThatNamesItsStrategyNeedsNoKubeVirtCrAndDoesNotWaitForIt() {
    evacuating("vm-1");
    kubevirtCr = KubeVirtClusterDefaultsTest.failure(429, "TooManyRequests", "later");
    guest.node = Optional.empty();

    reconcile("vm-1");

    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertEquals(0, clusterDefaultReads, "the KubeVirt CR is not read for it");
    assertFalse(events.has("Warning", VmiEvents.KUBEVIRT_CONFIG_UNREADABLE));
  }

  @Test
  void theFirstAnswerAfterAFailedReadWakesEveryVmiThatWaitedForIt() {
    vmis.put(vmi("vm-1", null, "infra-1"));
    vmis.put(vmi("vm-quiet", null, null));
    kubevirtCr = null; // no response
    reconcile("vm-1");
    assertTrue(reconcile("vm-quiet").isRequeue(), "an unmarked VMI waits too, without a word");
    assertEquals(
        1,
        events.list.stream()
            .filter(e -> VmiEvents.KUBEVIRT_CONFIG_UNREADABLE.equals(e.reason()))
            .count(),
        "only the VMI marked for evacuation is told");

    vmis.put(vmi("vm-own", "None", null));
    reconcile("vm-own");
    assertEquals(List.of(), woken, "a VMI naming its strategy read no CR: no answer, no wake");

    kubevirtCrReadAgainAs(kubevirtCr("External"));
    guest.node = Optional.empty();
    reconcile("vm-quiet");

    assertEquals(List.of("tenant-a/vm-1"), woken);
  }

  @Test
  void conflictWhileCordoningRetriesSoon() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.cordonConflict = true;

    Result r = reconcile("vm-1");

    assertEquals(new Result(true, VmiEvictionReconciler.CONFLICT_RETRY), r);
    assertTrue(vmis.deletedUids.isEmpty());
  }

  @Test
  void refusedDrainIsWarnedAndRetried() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(
        DrainPassTest.pass(
            false,
            0,
            1,
            Map.of(),
            List.of(),
            List.of("cannot delete x: ns/p"),
            "refused",
            0,
            Optional.empty(),
            Map.of()));

    Result r = reconcile("vm-1");

    assertEquals(new Result(true, RETRY), r);
    assertTrue(events.has("Warning", VmiEvents.DRAIN_REFUSED));
  }

  @Test
  void recreatedRunningVmiUncordonsTheNodeWeMarked() {
    vmis.put(vmi("vm-1", "External", null));
    V1Node n = node("vm-1", null, true, "True");
    n.getMetadata().getAnnotations().put(EvictionAnnotations.CORDONED_BY, "uid-of-the-old-vmi");
    guest.node = Optional.of(n);

    assertFalse(reconcile("vm-1").isRequeue());

    assertEquals(List.of("uncordon vm-1"), guest.calls);
    assertTrue(events.has("Normal", VmiEvents.UNCORDONED));
  }

  @Test
  void ofTheRunningVmisOfOneClusterOnlyTheOneWhoseNodeCarriesOurMarkUncordonsIt() {
    for (int i = 0; i < 50; i++) {
      vmis.put(vmi("vm-" + i, "External", null));
    }
    V1Node marked = node("node-of-vm-7", "kubevirt://vm-7", true, "True");
    marked
        .getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.CORDONED_BY, "uid-of-the-old-vm-7");
    guest.node = Optional.of(marked);

    for (int i = 0; i < 50; i++) {
      assertFalse(reconcile("vm-" + i).isRequeue());
    }

    assertEquals(List.of("uncordon node-of-vm-7"), guest.calls);
    // Each check reads its node once (GuestNodeWatchIT counts one GET per check, no watch).
  }

  @Test
  void aMarkWeJustSetIsSeenByTheUncordonCheckOfTheRecreatedVmi() {
    vmis.put(vmi("vm-2", "External", null));
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    reconcile("vm-2"); // reads its node: no mark of ours yet
    assertEquals(1, guest.nodeReads);

    evacuating("vm-1");
    guest.passes.add(complete());
    reconcile("vm-1"); // cordons and marks vm-1, drains, deletes the VMI
    assertEquals(
        "uid-vm-1",
        guest.node.get().getMetadata().getAnnotations().get(EvictionAnnotations.CORDONED_BY));

    // KubeVirt recreates vm-1 (a new UID); it runs again: its node is uncordoned, not skipped.
    VirtualMachineInstance again = vmi("vm-1", "External", null);
    again.getMetadata().setUid("uid-vm-1-new");
    vmis.put(again);
    reconcile("vm-1");
    assertEquals(List.of("cordon vm-1 for uid-vm-1", "drain vm-1", "uncordon vm-1"), guest.calls);
  }

  @Test
  void anUncordonCheckWhoseGuestIdentityMayNotListNodesReadsItsNodeByName() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(complete());
    reconcile("vm-1"); // cordons and marks vm-1, drains, deletes the VMI
    guest.nodeListForbidden = true;

    VirtualMachineInstance again = vmi("vm-1", "External", null);
    again.getMetadata().setUid("uid-vm-1-new");
    vmis.put(again);
    reconcile("vm-1");

    assertEquals(List.of("cordon vm-1 for uid-vm-1", "drain vm-1", "uncordon vm-1"), guest.calls);
    assertEquals(
        3, guest.nodeReads, "the node read to tell its role, to cordon it and to uncordon it");
  }

  @Test
  void nodeCordonedBySomeoneElseStaysCordonedAndIsNotAskedAgain() {
    vmis.put(vmi("vm-1", "External", null));
    guest.node = Optional.of(node("vm-1", null, true, "True"));

    reconcile("vm-1");
    reconcile("vm-1");

    assertEquals(List.of(), guest.calls);
    assertEquals(1, connects.size(), "the clean state is remembered per VMI UID");
  }

  @Test
  void calledOffEvacuationClearsTheDrainStartSoALaterOneStartsAfresh() {
    VirtualMachineInstance v = vmis.put(vmi("vm-1", "External", null));
    v.getMetadata()
        .getAnnotations()
        .put(EvictionAnnotations.DRAIN_START_TIME, "2025-03-01T11:00:00Z");
    v.getMetadata().getAnnotations().put(EvictionAnnotations.EVACUATION_PHASE, "Held");
    guest.node = Optional.empty();

    reconcile("vm-1");
    assertTrue(vmis.annotations.containsKey(EvictionAnnotations.DRAIN_START_TIME));
    assertEquals(null, vmis.annotations.get(EvictionAnnotations.DRAIN_START_TIME), "removed");
    assertTrue(vmis.annotations.containsKey(EvictionAnnotations.EVACUATION_PHASE));
    assertEquals(null, vmis.annotations.get(EvictionAnnotations.EVACUATION_PHASE), "removed");
    assertEquals(1, vmis.patches, "both in one patch");

    // Evacuated again an hour later: a new start, not an instant deadline.
    clock.now = T0.plus(Duration.ofHours(1));
    v.getStatus().setEvacuationNodeName("infra-2");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("ns/p", "ns/pdb"));
    assertEquals(new Result(true, RETRY), reconcile("vm-1"));
    assertTrue(vmis.deletedUids.isEmpty());
  }

  @Test
  void uncordonWaitsForTheGuestNodeToBeReady() {
    vmis.put(vmi("vm-1", "External", null));
    V1Node n = node("vm-1", null, true, "False");
    n.getMetadata().getAnnotations().put(EvictionAnnotations.CORDONED_BY, "old");
    guest.node = Optional.of(n);

    assertEquals(new Result(true, RETRY), reconcile("vm-1"));
    assertEquals(List.of(), guest.calls);
    assertEquals(List.of("vm-1"), guest.watched, "looked at again from the node's watch");
  }

  // ---------------------------------------------------------------------------------------------

  static DrainPass complete() {
    return DrainPassTest.pass(
        true, 3, 0, Map.of(), List.of(), List.of(), "3 evicted", 0, Optional.empty(), Map.of());
  }

  static DrainPass blocked(String pod, String budget) {
    return DrainPassTest.pass(
        false,
        0,
        1,
        Map.of(pod, Set.of(budget)),
        List.of(),
        List.of(),
        "1 pending",
        0,
        Optional.empty(),
        Map.of());
  }

  static final class MutableClock extends Clock {
    Instant now;

    MutableClock(Instant now) {
      this.now = now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Cluster API's contract (MachineContract) in the reconciler.

  static MachineContract.Facts facts(
      boolean paused, boolean excluded, String nodeDrainTimeout, String kubevirtMachineGrace) {
    return new MachineContract.Facts(
        "tenant-a/guest",
        Optional.of(MachineContractTest.cluster("tenant-a", "guest", paused)),
        Optional.of(MachineContractTest.kubevirtMachine("tenant-a", "vm-1", kubevirtMachineGrace)),
        Optional.of(
            MachineContractTest.machine("tenant-a", "machine-1", excluded, nodeDrainTimeout, null)),
        List.of());
  }

  @Test
  void pausedClusterLeavesTheGuestUntouchedAndTheDeadlineStillDeletes() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    facts = facts(true, false, null, null);

    Result r = reconcile("vm-1");
    assertEquals(new Result(true, RETRY), r);
    assertEquals(List.of(), connects, "no guest access while the Cluster is paused");
    assertTrue(events.has("Warning", VmiEvents.CLUSTER_PAUSED));
    assertTrue(vmis.deletedUids.isEmpty());
    assertEquals("Paused", vmis.annotations.get(EvictionAnnotations.EVACUATION_PHASE));

    clock.now = T0.plus(TIMEOUT);
    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of(), connects);
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    String warning = events.message("Warning", VmiEvents.DEADLINE_PASSED);
    assertTrue(warning.contains("paused"), warning);
  }

  @Test
  void machineExcludedFromDrainingIsDeletedAtOnceWithoutGuestAccess() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    facts = facts(false, true, null, null);

    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of(), connects);
    assertEquals(List.of(), guest.calls, "not cordoned, not drained");
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertTrue(events.has("Normal", Told.DRAIN_EXCLUDED.reason));
  }

  @Test
  void shorterMachineDrainTimeoutDeletesAtItsEarlierDeadline() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    facts = facts(false, false, "2m", null);

    Result first = reconcile("vm-1");
    // Every guest connection of the step (the admit step may read the guest node's role too).
    assertEquals(
        List.of(Optional.of(Duration.ofMinutes(2))), connectBounds.stream().distinct().toList());
    assertRequeueWithin(first, RETRY);
    assertTrue(events.has("Normal", VmiEvents.DRAIN_DEADLINE_SHORTENED));

    clock.now = T0.plus(Duration.ofMinutes(2));
    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    String warning = events.message("Warning", VmiEvents.DEADLINE_PASSED);
    assertTrue(warning.contains("Machine tenant-a/machine-1"), warning);
  }

  double deadlineUsed() {
    return Samples.value(registry, "vmi_eviction_evacuation_deadline_used_ratio");
  }

  @Test
  void deadlineUsedGaugeIsTheShareGoneOfTheEarliestDeadlineReadAtScrapeTime() {
    assertEquals(0.0, deadlineUsed(), "no evacuation");
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    guest.passes.add(complete());
    facts = facts(false, false, "5m", null); // the Machine's nodeDrainTimeout: before the 10m

    reconcile("vm-1");
    assertEquals(0.0, deadlineUsed());
    clock.now = T0.plus(Duration.ofMinutes(3));
    assertEquals(0.6, deadlineUsed(), 1e-9, "3 of 5 minutes, with no reconcile since");
    reconcile("vm-1");
    assertEquals(0.6, deadlineUsed(), 1e-9);

    reconcile("vm-1");
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertEquals(0.0, deadlineUsed(), "the deleted VMI's evacuation is over");
  }

  @Test
  void machineTimeoutRaisedMidDrainNeverMovesTheDeadlineLater() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    facts = facts(false, false, "2m", null);
    reconcile("vm-1");

    facts = facts(false, false, "8m", null);
    clock.now = T0.plus(Duration.ofMinutes(2));
    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
  }

  @Test
  void earlierGraceTimeOnTheKubevirtMachineWins() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    facts = facts(false, false, null, "2025-03-01T12:03:00Z");

    reconcile("vm-1");
    // Every guest connection of the step (the admit step may read the guest node's role too).
    assertEquals(
        List.of(Optional.of(Duration.ofMinutes(3))), connectBounds.stream().distinct().toList());

    clock.now = Instant.parse("2025-03-01T12:03:00Z");
    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    String warning = events.message("Warning", VmiEvents.DEADLINE_PASSED);
    assertTrue(warning.contains("KubevirtMachine tenant-a/vm-1"), warning);
  }

  @Test
  void aClusterBeingDeletedIsDrainedAsUsualAndToldOncePerEvacuation() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    facts = facts(false, false, null, null);
    facts
        .clusterObject()
        .orElseThrow()
        .getMetadata()
        .deletionTimestamp(T0.minus(Duration.ofMinutes(1)).atOffset(ZoneOffset.UTC));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    guest.passes.add(complete());

    assertRequeueWithin(reconcile("vm-1"), RETRY);
    assertFalse(reconcile("vm-1").isRequeue());

    assertEquals(List.of("uid-vm-1"), vmis.deletedUids, "drained, then deleted");
    assertTrue(events.has("Normal", VmiEvents.DRAIN_SUCCEEDED));
    assertEquals(
        1,
        events.reasons().stream().filter(Told.DELETING.reason::equals).count(),
        "told once, not per step");
    String told = events.message("Normal", Told.DELETING.reason);
    assertTrue(
        told.contains("Cluster tenant-a/guest is being deleted")
            && told.contains("proceeds as usual")
            && told.contains(DrainStartTime.format(T0.plus(TIMEOUT))),
        told);
  }

  @Test
  void missingObjectsDegradeToTodaysBehaviourWithOneEventPerVmi() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    facts =
        new MachineContract.Facts(
            "tenant-a/guest",
            Optional.of(MachineContractTest.cluster("tenant-a", "guest", false)),
            Optional.of(MachineContractTest.kubevirtMachine("tenant-a", "vm-1", null)),
            Optional.empty(),
            List.of("Machine tenant-a/machine-1 not found"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    guest.passes.add(blocked("guest-ns/db-0", "guest-ns/db-pdb"));
    guest.passes.add(complete());

    reconcile("vm-1");
    reconcile("vm-1");
    assertFalse(reconcile("vm-1").isRequeue());

    assertEquals(3, factReads, "read on every step");
    assertEquals(
        1,
        events.reasons().stream().filter(Told.CONTRACT_UNAVAILABLE.reason::equals).count(),
        "told once, not per step");
    assertTrue(
        events
            .message("Warning", Told.CONTRACT_UNAVAILABLE.reason)
            .contains("Machine tenant-a/machine-1 not found"));
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertTrue(events.has("Normal", VmiEvents.DRAIN_SUCCEEDED));
  }

  @Test
  void aTransientReadFailureIsRetriedNeverTurnedIntoADefault() {
    evacuating("vm-1");
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(complete());
    factsFailure =
        new GuestAccessException(
            GuestAccessException.Reason.InfraAPIError,
            "reading Machine tenant-a/machine-1 failed: HTTP 503");

    Result r = reconcile("vm-1");
    assertRequeueWithin(r, TIMEOUT);
    assertEquals(List.of(), connects, "no drain on a guess");
    assertTrue(events.has("Warning", "InfraAPIError"));
    assertTrue(vmis.deletedUids.isEmpty());

    // Once the read works, the Machine's exclusion is honoured.
    factsFailure = null;
    facts = facts(false, true, null, null);
    assertFalse(reconcile("vm-1").isRequeue());
    assertEquals(List.of(), connects);
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
  }

  /** A control-plane VMI (CAPK's role label); {@code admittedAt}: its evacuation was admitted. */
  static VirtualMachineInstance controlPlane(VirtualMachineInstance vmi, String admittedAt) {
    vmi.getMetadata().getLabels().put(CapkLabels.ROLE, CapkLabels.ROLE_CONTROL_PLANE);
    if (admittedAt != null) {
      vmi.getMetadata().getAnnotations().put(EvictionAnnotations.DRAIN_START_TIME, admittedAt);
      vmi.getMetadata().getAnnotations().put(EvictionAnnotations.EVACUATION_ADMITTED, admittedAt);
    }
    return vmi;
  }

  @Test
  void aHeldControlPlaneVmiTouchesNoGuestAndComesBackNoLaterThanDeadlineMinusReserve() {
    controlPlane(evacuating("vm-1"), "2025-03-01T12:00:00Z");
    controlPlane(evacuating("vm-2"), null);
    guest.node = Optional.of(node("vm-2", null, false, "True"));

    Result held = reconcile("vm-2");

    assertRequeueWithin(held, RETRY);
    assertEquals(List.of(), guest.calls, "neither cordoned nor drained while held");
    assertTrue(vmis.deletedUids.isEmpty());
    String message = events.message("Normal", VmiEvents.EVACUATION_HELD);
    assertTrue(message.contains("vm-1 still being evacuated"), message);
    assertFalse(events.has("Warning", VmiEvents.QUORUM_GUARD_OVERRIDDEN));
    assertEquals("Held", vmis.annotations.get(EvictionAnnotations.EVACUATION_PHASE));
    assertEquals(1.0, phaseGauge("Held"));

    Instant goAheadAt = T0.plus(TIMEOUT).minus(EvictionSettings.DEFAULT_DRAIN_RESERVE);
    clock.now = goAheadAt.minusSeconds(5);
    assertEquals(
        new Result(true, Duration.ofSeconds(5)),
        reconcile("vm-2"),
        "the last look of the hold is at deadline minus reserve, not a retry interval later");
    assertEquals(List.of(), guest.calls);
  }

  @Test
  void aHeldControlPlaneVmiGoesAheadAtDeadlineMinusReserveWithAWarning() {
    controlPlane(evacuating("vm-1"), "2025-03-01T12:00:00Z");
    controlPlane(evacuating("vm-2"), null);
    guest.node = Optional.of(node("vm-2", null, false, "True"));
    guest.passes.add(complete());
    reconcile("vm-2");
    assertEquals(List.of(), guest.calls);

    clock.now = T0.plus(TIMEOUT).minus(EvictionSettings.DEFAULT_DRAIN_RESERVE);
    assertFalse(reconcile("vm-2").isRequeue());

    String warning = events.message("Warning", VmiEvents.QUORUM_GUARD_OVERRIDDEN);
    assertTrue(warning.contains("vm-1 still being evacuated"), warning);
    assertEquals(List.of("cordon vm-2 for uid-vm-2", "drain vm-2"), guest.calls);
    assertEquals(List.of("uid-vm-2"), vmis.deletedUids);
    assertEquals(
        "2025-03-01T12:00:00Z", vmis.annotations.get(EvictionAnnotations.EVACUATION_ADMITTED));
    assertEquals("Draining", vmis.annotations.get(EvictionAnnotations.EVACUATION_PHASE));
  }

  @Test
  void anAdmittedControlPlaneVmiIsDrainedAtOnceWithoutAHoldOrWarning() {
    controlPlane(evacuating("vm-1"), null);
    controlPlane(vmis.put(vmi("vm-2", "External", null)), null);
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(complete());

    assertFalse(reconcile("vm-1").isRequeue());

    assertEquals(List.of("cordon vm-1 for uid-vm-1", "drain vm-1"), guest.calls);
    assertEquals(List.of("uid-vm-1"), vmis.deletedUids);
    assertFalse(events.has("Normal", VmiEvents.EVACUATION_HELD));
    assertFalse(events.has("Warning", VmiEvents.QUORUM_GUARD_OVERRIDDEN));
  }

  @Test
  void aHeldControlPlaneVmiIsWokenWhenTheControlPlaneNodeItWaitedForIsUncordoned() {
    controlPlane(evacuating("vm-1"), "2025-03-01T12:00:00Z");
    controlPlane(evacuating("vm-2"), null);
    guest.node = Optional.of(node("vm-2", null, false, "True"));
    assertTrue(reconcile("vm-2").isRequeue());
    assertTrue(events.has("Normal", VmiEvents.EVACUATION_HELD));
    assertEquals(List.of(), woken);

    // vm-1 was deleted and recreated (a new UID, no evacuation); it runs, and its guest node,
    // cordoned by us, is Ready again: uncordoning it wakes the held vm-2 at once.
    VirtualMachineInstance again = controlPlane(vmi("vm-1", "External", null), null);
    again.getMetadata().setUid("uid-vm-1-new");
    vmis.put(again);
    V1Node back = node("vm-1", null, true, "True");
    back.getMetadata().getAnnotations().put(EvictionAnnotations.CORDONED_BY, "uid-vm-1");
    guest.node = Optional.of(back);
    reconcile("vm-1");

    assertEquals(List.of("uncordon vm-1"), guest.calls);
    assertTrue(woken.contains("tenant-a/vm-2"), "woken: " + woken);
    assertFalse(woken.contains("tenant-a/vm-1"), "only held VMIs are woken: " + woken);
  }

  @Test
  void aHeldWorkerIsWokenWhenTheAdmittedWorkerOfItsClusterIsGone() {
    reconciler =
        reconciler(
            settings(
                EvacuationLimit.parse("1").orElseThrow(),
                EvictionSettings.DEFAULT_DRAIN_RESERVE,
                LiveMigrationPolicy.NEVER,
                EvictionSettings.DEFAULT_MIGRATION_ATTEMPTS));
    worker(evacuating("vm-1"));
    guest.node = Optional.of(node("vm-1", null, false, "True"));
    guest.passes.add(blocked("ns/p", "ns/pdb"));
    reconcile("vm-1"); // admitted: the Cluster's one slot
    worker(evacuating("vm-2"));
    assertTrue(reconcile("vm-2").isRequeue());
    assertTrue(
        events.message("Normal", VmiEvents.EVACUATION_HELD).contains("limit 1"),
        events.message("Normal", VmiEvents.EVACUATION_HELD));
    assertEquals(List.of(), woken);

    vmis.byName.remove("vm-1"); // deleted: the slot is free
    reconcile("vm-1");

    assertEquals(List.of("tenant-a/vm-2"), woken);
  }

  static VirtualMachineInstance worker(VirtualMachineInstance vmi) {
    vmi.getMetadata().getLabels().put(CapkLabels.ROLE, "worker");
    return vmi;
  }

  /** The real {@link InfraVmis} over an in-memory cache and API server. */
  static final class FakeVmis {
    final Map<String, VirtualMachineInstance> byName = new HashMap<>();
    final Map<String, String> annotations = new HashMap<>();
    final List<String> deletedUids = new ArrayList<>();
    int patches;
    int conflictsLeft;

    final InfraVmis infra =
        new InfraVmis(
            (namespace, name) -> byName.get(name),
            (namespace, cluster) ->
                byName.values().stream()
                    .filter(v -> namespace.equals(v.getMetadata().getNamespace()))
                    .filter(
                        v ->
                            cluster.equals(
                                v.getMetadata().getLabels().get(CapkLabels.CLUSTER_NAME)))
                    .toList(),
            new GenericKubernetesApi<>(
                VirtualMachineInstance.class,
                VirtualMachineInstanceList.class,
                "kubevirt.io",
                "v1",
                "virtualmachineinstances",
                new ApiClient()) {
              @Override
              public KubernetesApiResponse<VirtualMachineInstance> patch(
                  String namespace, String name, String type, V1Patch patch, PatchOptions o) {
                VirtualMachineInstance vmi = byName.get(name);
                if (conflictsLeft > 0) {
                  conflictsLeft--;
                  return new KubernetesApiResponse<>(
                      new V1Status().message("the object has been modified"), 409);
                }
                patches++;
                String rv = vmi.getMetadata().getResourceVersion();
                vmi.getMetadata().setResourceVersion(rv == null ? "1" : rv + "+");
                JsonParser.parseString(patch.getValue())
                    .getAsJsonObject()
                    .getAsJsonObject("metadata")
                    .getAsJsonObject("annotations")
                    .entrySet()
                    .forEach(
                        e -> {
                          String value =
                              e.getValue().isJsonNull() ? null : e.getValue().getAsString();
                          annotations.put(e.getKey(), value);
                          if (value == null) {
                            vmi.getMetadata().getAnnotations().remove(e.getKey());
                          } else {
                            vmi.getMetadata().getAnnotations().put(e.getKey(), value);
                          }
                        });
                return new KubernetesApiResponse<>(vmi);
              }

              @Override
              public KubernetesApiResponse<VirtualMachineInstance> delete(
                  String namespace, String name, DeleteOptions o) {
                VirtualMachineInstance vmi = byName.remove(name);
                deletedUids.add(vmi.getMetadata().getUid());
                return new KubernetesApiResponse<>(vmi);
              }
            });

    VirtualMachineInstance put(VirtualMachineInstance v) {
      byName.put(v.getMetadata().getName(), v);
      return v;
    }
  }

  static final class FakeGuest extends Guest {
    FakeGuest() {
      super(null, null);
    }

    Optional<V1Node> node = Optional.empty();
    final Deque<DrainPass> passes = new ArrayDeque<>();
    Duration throttledFor;
    int stepsEntered;
    int stepsLeft;
    GuestAccessException drainFailure;
    final List<String> calls = new ArrayList<>();
    boolean cordonConflict;
    Duration lastTimeout;
    boolean lastUnreachable;

    @Override
    public String cluster() {
      return "tenant-a/guest";
    }

    int nodeReads;
    boolean nodeListForbidden;

    final List<String> watched = new ArrayList<>();

    @Override
    public void watchNode(String nodeName) {
      watched.add(nodeName);
    }

    @Override
    public Optional<V1Node> findNode(String vmiName, boolean watch) {
      nodeReads++;
      return node.flatMap(n -> Guest.GuestNodeMatch.choose(vmiName, List.of(n)));
    }

    @Override
    public MarkedNodes markedNodes() throws GuestAccessException {
      if (nodeListForbidden) {
        throw new GuestAccessException(
            GuestAccessException.Reason.GuestAPIForbidden, "listing nodes denied");
      }
      return MarkedNodes.of(node.map(List::of).orElse(List.of()));
    }

    @Override
    public V1Node cordonAndMark(V1Node n, String vmiUid) throws ApiException {
      if (cordonConflict) {
        throw new ApiException(409, "conflict");
      }
      calls.add("cordon " + n.getMetadata().getName() + " for " + vmiUid);
      n.getMetadata().getAnnotations().put(EvictionAnnotations.CORDONED_BY, vmiUid);
      n.getSpec().setUnschedulable(true);
      return n;
    }

    @Override
    public Optional<Duration> tryEnterStep(boolean finishing) {
      if (finishing) {
        return Optional.empty();
      }
      if (throttledFor != null) {
        return Optional.of(throttledFor);
      }
      stepsEntered++;
      return Optional.empty();
    }

    @Override
    public void leaveStep() {
      stepsLeft++;
    }

    @Override
    public DrainPass drainStep(
        String vmiKey, String nodeName, Duration timeout, boolean unreachable)
        throws GuestAccessException {
      calls.add("drain " + nodeName);
      lastTimeout = timeout;
      lastUnreachable = unreachable;
      if (drainFailure != null) {
        throw drainFailure;
      }
      return passes.removeFirst();
    }

    @Override
    public V1Node unmark(V1Node n) {
      boolean cordoned = n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
      calls.add((cordoned ? "uncordon " : "unmark ") + n.getMetadata().getName());
      return n;
    }

    @Override
    public void nodeEvent(V1Node n, boolean warning, String reason, String message) {}
  }

  record Event(String type, String reason, String message) {}

  static final class FakeEvents implements VmiEvents {
    final List<Event> list = new ArrayList<>();

    @Override
    public void record(VirtualMachineInstance vmi, boolean warning, String reason, String message) {
      list.add(new Event(warning ? "Warning" : "Normal", reason, message));
    }

    List<String> reasons() {
      return list.stream().map(Event::reason).toList();
    }

    boolean has(String type, String reason) {
      return list.stream().anyMatch(e -> e.type().equals(type) && e.reason().equals(reason));
    }

    String message(String type, String reason) {
      return list.stream()
          .filter(e -> e.type().equals(type) && e.reason().equals(reason))
          .reduce((a, b) -> b)
          .map(Event::message)
          .orElseThrow(() -> new AssertionError("no " + type + " " + reason + " in " + list));
    }
  }

  /** The test's drain timeout and retry interval, with these limits. */
  private static EvictionSettings settings(
      EvacuationLimit limit, Duration reserve, LiveMigrationPolicy policy, int attempts) {
    return new EvictionSettings(
        TIMEOUT,
        RETRY,
        Duration.ofSeconds(20),
        "None",
        Duration.ofMinutes(1),
        limit,
        reserve,
        policy,
        attempts);
  }
}
