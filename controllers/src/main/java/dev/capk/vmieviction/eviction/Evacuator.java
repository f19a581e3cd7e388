package dev.capk.vmieviction.eviction;

import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.CONFLICT_RETRY;
import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.DONE;
import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.MAX_CLOCK_SKEW;

import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.EvictionMetrics.Outcome;
import dev.capk.vmieviction.eviction.GuestClusters.GuestNodeDrainer.DrainPass;
import dev.capk.vmieviction.eviction.GuestClusters.GuestNodeDrainer.GuestNodeMatch;
import dev.capk.vmieviction.eviction.GuestClusters.GuestNodeDrainer.GuestNodeMatch.NodeReadiness;
import dev.capk.vmieviction.eviction.GuestNodeUncordoner.CordonMarks;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.MarkSightings;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.Metadata;
import dev.capk.vmieviction.logging.WaitLog;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Carries an evacuation forward by one step: record (or restore) the drain start, check the
 * deadline first, cordon the guest node with our mark, advance the guest node's drain by one
 * non-blocking step (the evictions that are due), and delete the VMI once drained or at the
 * deadline. No step waits: the next one comes through the work queue, when a pod is due again or
 * when the watch on the guest node's pods sees pods leave. The pure decisions live in {@link
 * DrainStartTime}, {@link EvacuationDeadline} and {@link DrainPass}; this class does their I/O,
 * events and logs.
 */
final class Evacuator {

  private static final Logger log = LoggerFactory.getLogger(Evacuator.class);

  /** The soonest a drain's next step comes back on its own (more pods due than one step sends). */
  private static final Duration MIN_STEP_DELAY = Duration.ofMillis(10);

  /** Conflicts on one VMI's guest node in a row that are read again at once, before backing off. */
  static final int MAX_QUICK_CONFLICTS = 3;

  /** Answers that will not change by asking again soon: backed off up to the retry interval. */
  private static final Set<String> REFUSALS =
      Set.of(GuestAccessException.Reason.GuestAPIRefused.name(), EventReasons.GUEST_NODE_CONFLICTS);

  /** Why the VMI is deleted, said once per evacuation by its last event. */
  private static final String DELETED_SO_THAT = "so that KubeVirt recreates it on another node";

  private final CordonMarks marks;
  private final MachineContractCheck contracts;
  private final TenantAdmission admission;
  private final LiveMigrationStep migration;
  private final MarkSightings sightings;

  /** What each evacuation's drain waits for, as last told. */
  private final WaitLog waits = new WaitLog();

  private final StepContext c;

  Evacuator(
      StepContext c,
      CordonMarks marks,
      MachineContractCheck contracts,
      TenantAdmission admission,
      LiveMigrationStep migration,
      MarkSightings sightings) {
    this.c = c;
    this.marks = marks;
    this.contracts = contracts;
    this.admission = admission;
    this.migration = migration;
    this.sightings = sightings;
  }

  /**
   * One step of the evacuation of a VMI that KubeVirt marked and whose strategy is External: each
   * of its steps below either hands the next one what it goes on with, or ends this reconcile with
   * its result.
   */
  Result evacuate(String key, VirtualMachineInstance vmi) {
    Step<Started> started = start(key, vmi);
    if (started.ended()) {
      return started.result();
    }
    vmi = started.value().vmi();
    Instant start = started.value().start();
    // The deadline is checked before anything touches the guest cluster.
    if (started.value().deadline().passed()) {
      return deadlineReached(key, vmi, start, started.value().deadline(), null);
    }
    Step<MachineContractCheck.Applied> contract =
        applyContract(key, vmi, start, started.value().deadline());
    if (contract.ended()) {
      return contract.result();
    }
    MachineContractCheck.Applied applied = contract.value();
    Deadline deadline = applied.deadline();
    // Admit: one control-plane VMI of a tenant at a time, the per-cluster limit for workers. A
    // held VMI keeps its deadline and goes ahead at deadline - reserve at the latest.
    Step<VirtualMachineInstance> admitted =
        proceedOrWait(
            key,
            vmi,
            deadline,
            "recording the admission",
            v -> admission.check(key, v, start, deadline, applied.clusterEvacuationLimit()));
    if (admitted.ended()) {
      return admitted.result();
    }
    // Migrate: with live migration preferred, a LiveMigratable VMI moves and its guest is never
    // drained; the drain after it is the fallback, inside the same deadline.
    Step<VirtualMachineInstance> migrated =
        proceedOrWait(
            key,
            admitted.value(),
            deadline,
            "the live migration step",
            v -> migration.step(key, v, start, deadline, applied.clusterLiveMigration()));
    if (migrated.ended()) {
      return migrated.result();
    }
    return drainGuest(
        key, inPhase(key, migrated.value(), EvacuationPhase.Draining), start, deadline);
  }

  /** Cordons the guest node and advances its drain by one step; deletes the VMI once drained. */
  private Result drainGuest(
      String key, VirtualMachineInstance vmi, Instant start, Deadline deadline) {
    Step<Guest> entered = enterGuest(key, vmi, deadline);
    if (entered.ended()) {
      return entered.result();
    }
    Guest guest = entered.value();
    // Cordoning marks the node for this UID: from now on the uncordon check must look again.
    marks.mayBeMarked(vmi.getMetadata().getUid());
    try {
      Step<V1Node> found = findNode(key, vmi, start, guest);
      if (found.ended()) {
        return found.result();
      }
      V1Node node = cordoned(key, vmi, guest, found.value());
      Pass pass = drainStep(key, vmi.getMetadata().getUid(), deadline, guest, node);
      if (pass.result().refused()) {
        return drainRefused(key, vmi, start, deadline, pass);
      }
      if (pass.result().complete()) {
        return drained(key, vmi, start, pass);
      }
      return notDrainedYet(key, vmi, start, deadline, pass);
    } catch (GuestAccessException | ApiException | RuntimeException e) {
      return guestStepFailed(key, vmi, deadline, guest, e);
    } finally {
      guest.leaveStep();
    }
  }

  /**
   * What one step of the evacuation hands the next: a value to go on with, or (when {@link
   * #ended()}) the result that ends this reconcile.
   */
  private record Step<T>(T value, Result result) {
    static <T> Step<T> next(T value) {
      return new Step<>(value, null);
    }

    static <T> Step<T> end(Result result) {
      return new Step<>(null, result);
    }

    boolean ended() {
      return result != null;
    }
  }

  /** The drain start and its deadline; {@code vmi} as the start's annotation left it. */
  private record Started(VirtualMachineInstance vmi, Instant start, Deadline deadline) {}

  /** One drain step's answer, with the node it drained and since when the drain waits. */
  private record Pass(Guest guest, V1Node node, Instant drainBegan, DrainPass result) {
    String nodeName() {
      return node.getMetadata().getName();
    }
  }

  /** Records the drain start, or restores it when it was changed mid-drain, and tells so. */
  private Step<Started> start(String key, VirtualMachineInstance vmi) {
    Instant now = c.clock().instant();
    String uid = vmi.getMetadata().getUid();
    String recorded = Metadata.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME);
    String capkGrace = Metadata.annotation(vmi, EvictionAnnotations.CAPK_DELETION_GRACE_TIME);
    DrainStartTime.Decision decision =
        DrainStartTime.decide(
            DrainStartTime.parse(recorded, now, MAX_CLOCK_SKEW),
            c.memory().knownStart(key, uid),
            // The drain starts when the mark was seen, however long this VMI waited for a worker.
            sightings.firstSeen(uid),
            now);
    Instant start = decision.start();
    if (!(decision instanceof DrainStartTime.Decision.Keep)) {
      Map<String, String> changes = new LinkedHashMap<>();
      changes.put(EvictionAnnotations.DRAIN_START_TIME, DrainStartTime.format(start));
      if (!(decision instanceof DrainStartTime.Decision.Restore)) {
        // A new evacuation: the common course is the drain, recorded with the start at no cost.
        changes.put(EvictionAnnotations.EVACUATION_PHASE, EvacuationPhase.Draining.name());
      }
      try {
        vmi = c.vmis().annotate(vmi, changes);
      } catch (ApiException e) {
        // A 409 here is usually our own stale cache (the write before this one not seen yet): look
        // again at once. A known start keeps its deadline while the annotation cannot be fixed.
        return Step.end(
            infraFailure(
                key,
                vmi,
                "recording the drain start",
                e,
                decision instanceof DrainStartTime.Decision.Restore
                    ? EvacuationDeadline.of(
                        start, c.settings().drainTimeout(), capkGrace, c.clock())
                    : null));
      }
    }
    c.memory().recordStart(key, uid, start);
    Deadline deadline =
        EvacuationDeadline.of(start, c.settings().drainTimeout(), capkGrace, c.clock());
    if (decision instanceof DrainStartTime.Decision.Restore restore) {
      restored(key, vmi, restore, start, deadline);
    }
    if (decision instanceof DrainStartTime.Decision.ReplaceMalformed malformed) {
      replacedMalformed(key, vmi, malformed, start);
    }
    if (decision instanceof DrainStartTime.Decision.Begin
        || decision instanceof DrainStartTime.Decision.ReplaceMalformed) {
      begun(key, vmi, start, deadline);
    }
    c.memory().underWay(key, uid, start, deadline.at());
    return Step.next(new Started(vmi, start, deadline));
  }

  private void restored(
      String key,
      VirtualMachineInstance vmi,
      DrainStartTime.Decision.Restore restore,
      Instant start,
      Deadline deadline) {
    String was =
        restore.raw() == null ? "" : " (to \"" + NotEvacuatedNotices.shorten(restore.raw()) + "\")";
    log.warn(
        "drain start annotation {} mid-drain, restored vmi={} start={} deadline={}",
        restore.tampering().phrase,
        key,
        DrainStartTime.format(start),
        DrainStartTime.format(deadline.at()));
    c.events()
        .warning(
            vmi,
            EventReasons.DRAIN_START_TIME_RESTORED,
            "Annotation "
                + EvictionAnnotations.DRAIN_START_TIME
                + " "
                + restore.tampering().phrase
                + was
                + " during the drain; restored to the earliest start "
                + DrainStartTime.format(start)
                + ": the deadline "
                + DrainStartTime.format(deadline.at())
                + " never moves later");
  }

  private void replacedMalformed(
      String key,
      VirtualMachineInstance vmi,
      DrainStartTime.Decision.ReplaceMalformed malformed,
      Instant start) {
    String shown = NotEvacuatedNotices.shorten(malformed.raw());
    log.warn(
        "drain start annotation malformed, replaced vmi={} value=\"{}\" start={}",
        key,
        shown,
        DrainStartTime.format(start));
    c.events()
        .warning(
            vmi,
            EventReasons.DRAIN_START_TIME_INVALID,
            "Annotation "
                + EvictionAnnotations.DRAIN_START_TIME
                + " value \""
                + shown
                + "\" is not an RFC 3339 time in the past; drain start reset to "
                + DrainStartTime.format(start));
  }

  private void begun(String key, VirtualMachineInstance vmi, Instant start, Deadline deadline) {
    c.metrics().evacuationStarted();
    log.info(
        "evacuation started vmi={} infraNode={} start={} deadline={}",
        key,
        Eligibility.evacuationNodeName(vmi),
        DrainStartTime.format(start),
        DrainStartTime.format(deadline.at()));
    c.events()
        .normal(
            vmi,
            EventReasons.DRAIN_STARTED,
            "Infra node "
                + Eligibility.evacuationNodeName(vmi)
                + " is being drained: draining the guest node, "
                + "then deleting this VMI; deadline "
                + DrainStartTime.format(deadline.at()));
  }

  /**
   * Cluster API's contract (MachineContract): may move the deadline earlier, leave a paused
   * Cluster's guest untouched (a wait, as admission's, until the deadline), or skip the drain.
   */
  private Step<MachineContractCheck.Applied> applyContract(
      String key, VirtualMachineInstance vmi, Instant start, Deadline deadline) {
    MachineContractCheck.Applied contract;
    try {
      contract = contracts.apply(key, vmi, start, deadline);
    } catch (GuestAccessException e) {
      return Step.end(guestFailure(key, vmi, deadline, e));
    }
    Deadline moved = contract.deadline();
    c.memory().underWay(key, vmi.getMetadata().getUid(), start, moved.at());
    if (moved.passed()) {
      return Step.end(deadlineReached(key, vmi, start, moved, contract.origin().orElse(null)));
    }
    return switch (contract.step()) {
      case SKIP_DRAIN -> Step.end(delete(key, vmi, start, Outcome.DRAIN_EXCLUDED));
      case HOLD_PAUSED ->
          Step.end(
              proceedOrWait(
                      key,
                      vmi,
                      moved,
                      new StepOutcome.Wait(
                          EvacuationPhase.Paused,
                          "the Cluster is paused",
                          c.settings().retryInterval()))
                  .result());
      case DRAIN -> Step.next(contract);
    };
  }

  /** A step that answers a {@link StepOutcome}. */
  @FunctionalInterface
  private interface OutcomeStep {
    StepOutcome run(VirtualMachineInstance vmi) throws GuestAccessException, ApiException;
  }

  /**
   * Runs a step: go on with the VMI it answers, or wait in the phase it names (recorded on the
   * VMI). A guest it could not reach, or an infra write ({@code what}) that failed, ends the
   * reconcile.
   */
  private Step<VirtualMachineInstance> proceedOrWait(
      String key, VirtualMachineInstance vmi, Deadline deadline, String what, OutcomeStep step) {
    StepOutcome outcome;
    try {
      outcome = step.run(vmi);
    } catch (GuestAccessException e) {
      return Step.end(guestFailure(key, vmi, deadline, e));
    } catch (ApiException e) {
      return Step.end(infraFailure(key, vmi, what, e, deadline));
    }
    return proceedOrWait(key, vmi, deadline, outcome);
  }

  /** Goes on with the VMI an outcome answers, or waits in the phase it names (recorded). */
  private Step<VirtualMachineInstance> proceedOrWait(
      String key, VirtualMachineInstance vmi, Deadline deadline, StepOutcome outcome) {
    if (outcome instanceof StepOutcome.Wait wait) {
      inPhase(key, vmi, wait.phase());
      c.memory().blockedBy(vmi.getMetadata().getUid(), wait.blocker());
      return Step.end(requeue(deadline, wait.retry()));
    }
    return Step.next(((StepOutcome.Proceed) outcome).vmi());
  }

  /**
   * Records the phase the evacuation is in on the VMI, when it changed (one patch per change): what
   * {@code status} reads. A failed write never holds the evacuation: its next step writes again.
   *
   * @return the VMI as the write left it
   */
  private VirtualMachineInstance inPhase(
      String key, VirtualMachineInstance vmi, EvacuationPhase phase) {
    c.memory().inPhase(key, phase);
    if (phase.name().equals(Metadata.annotation(vmi, EvictionAnnotations.EVACUATION_PHASE))) {
      return vmi;
    }
    try {
      return c.vmis().annotate(vmi, EvictionAnnotations.EVACUATION_PHASE, phase.name());
    } catch (ApiException e) {
      log.debug(
          "phase not recorded vmi={} phase={} error=\"{}\"", key, phase, ApiStatus.describe(e));
      return vmi;
    }
  }

  /**
   * Connects to the guest cluster and enters one of the tenant's steps; the caller leaves it. A
   * step that may not talk to its guest cluster now comes back later, and this worker moves on.
   */
  private Step<Guest> enterGuest(String key, VirtualMachineInstance vmi, Deadline deadline) {
    Guest guest;
    try {
      // From here on no guest request may run past the deadline.
      guest = c.guests().connect(vmi, Optional.of(deadline.remaining()));
    } catch (GuestAccessException e) {
      return Step.end(guestFailure(key, vmi, deadline, e));
    }
    boolean woken = c.guests().takeWake(key);
    log.debug("guest step vmi={} cluster={} woken={}", key, guest.cluster(), woken);
    Optional<Duration> throttled = guest.tryEnterStep(woken);
    if (throttled.isPresent()) {
      c.metrics().throttled();
      log.debug(
          "guest step throttled vmi={} cluster={} retryIn={}",
          key,
          guest.cluster(),
          throttled.get());
      return Step.end(requeue(deadline, throttled.get()));
    }
    return Step.next(guest);
  }

  /** The VMI's guest node; none: nothing to drain, and the VMI is deleted. */
  private Step<V1Node> findNode(String key, VirtualMachineInstance vmi, Instant start, Guest guest)
      throws GuestAccessException, ApiException {
    String vmiName = vmi.getMetadata().getName();
    Optional<V1Node> found = guest.findNode(vmiName);
    if (found.isPresent()) {
      return Step.next(found.get());
    }
    String msg =
        "No guest node named "
            + vmiName
            + " or with providerID "
            + GuestNodeMatch.providerIdFor(vmiName)
            + " in cluster "
            + guest.cluster()
            + ": nothing to drain";
    log.info("guest node not found vmi={} cluster={}", key, guest.cluster());
    c.events().normal(vmi, EventReasons.GUEST_NODE_NOT_FOUND, msg);
    return Step.end(delete(key, vmi, start, Outcome.NODE_MISSING));
  }

  /**
   * Cordons the guest node unless it is cordoned already; returns it as the cordon left it, for the
   * next steps: nodes read are shared, never changed here.
   */
  private V1Node cordoned(String key, VirtualMachineInstance vmi, Guest guest, V1Node read)
      throws GuestAccessException, ApiException {
    String nodeName = read.getMetadata().getName();
    boolean unschedulable =
        read.getSpec() != null && Boolean.TRUE.equals(read.getSpec().getUnschedulable());
    V1Node node =
        unschedulable
            ? read
            : cordon(guest, read, vmi.getMetadata().getUid(), vmi.getMetadata().getName());
    if (!unschedulable) {
      log.info("guest node cordoned vmi={} cluster={} node={}", key, guest.cluster(), nodeName);
      c.events()
          .normal(
              vmi,
              EventReasons.CORDONED,
              "Cordoned guest node " + nodeName + " in cluster " + guest.cluster());
      guest.nodeEvent(
          node,
          false,
          EventReasons.CORDONED,
          "Cordoned: infra VMI "
              + key
              + " is being evacuated from node "
              + Eligibility.evacuationNodeName(vmi));
    }
    return node;
  }

  /** Advances the guest node's drain by one step: the evictions that are due, none waited for. */
  private Pass drainStep(String key, String uid, Deadline deadline, Guest guest, V1Node node)
      throws GuestAccessException, ApiException {
    boolean unreachable = NodeReadiness.of(node) == NodeReadiness.UNREACHABLE;
    Duration requestTimeout =
        EvacuationDeadline.passTimeout(deadline, c.settings().attemptTimeout());
    Instant stepStart = c.clock().instant();
    // After a hold (tenant protection) the drain's own waiting counts, not the evacuation's.
    Instant drainBegan = c.memory().drainBegan(uid, stepStart);
    DrainPass pass =
        guest.drainStep(key, node.getMetadata().getName(), requestTimeout, unreachable);
    c.metrics().drainStep(Duration.between(stepStart, c.clock().instant()));
    c.metrics()
        .evictions(EvictionMetrics.EvictionResult.BLOCKED_BY_BUDGET, pass.blockingBudgets().size());
    c.metrics().evictions(EvictionMetrics.EvictionResult.ERROR, pass.failures().size());
    c.memory().succeeded(key);
    return new Pass(guest, node, drainBegan, pass);
  }

  /** The drain's waits are looked at again at every step: told once per change. */
  private static String drainWait(VirtualMachineInstance vmi, Instant start) {
    return vmi.getMetadata().getUid() + "/" + DrainStartTime.format(start) + "/drain";
  }

  private Result drainRefused(
      String key, VirtualMachineInstance vmi, Instant start, Deadline deadline, Pass step) {
    DrainPass pass = step.result();
    c.memory()
        .blockedBy(vmi.getMetadata().getUid(), pass.pending() + " pod(s) left: " + pass.blockers());
    log.atLevel(waits.changed(drainWait(vmi, start), pass.refusals()) ? Level.WARN : Level.DEBUG)
        .log(
            "drain refused vmi={} cluster={} node={} refusals={}",
            key,
            step.guest().cluster(),
            step.nodeName(),
            pass.refusals());
    c.events()
        .warning(
            vmi,
            EventReasons.DRAIN_REFUSED,
            "Drain of guest node "
                + step.nodeName()
                + " refused: "
                + String.join("; ", pass.refusals()));
    return requeue(deadline, c.settings().retryInterval());
  }

  private Result drained(String key, VirtualMachineInstance vmi, Instant start, Pass step) {
    DrainPass pass = step.result();
    Guest guest = step.guest();
    c.metrics().evictions(EvictionMetrics.EvictionResult.EVICTED, pass.evicted());
    log.info(
        "guest node drained vmi={} cluster={} node={} summary=\"{}\"",
        key,
        guest.cluster(),
        step.nodeName(),
        pass.summary());
    // The delete first, the events after it: nothing stands between the last pod leaving and
    // the VMI's deletion but the delete request itself.
    return delete(
        key,
        vmi,
        start,
        Outcome.DRAINED,
        deleted -> {
          // One event says both (drained, then deleted): VMIDeleted would repeat it.
          c.events()
              .normal(
                  vmi,
                  EventReasons.DRAIN_SUCCEEDED,
                  "Guest node "
                      + step.nodeName()
                      + " drained: "
                      + pass.summary()
                      + (deleted ? "; VMI deleted " + DELETED_SO_THAT : ""));
          guest.nodeEvent(
              step.node(),
              false,
              EventReasons.DRAIN_SUCCEEDED,
              "Drained for the evacuation of infra VMI " + key);
          return true;
        });
  }

  private Result notDrainedYet(
      String key, VirtualMachineInstance vmi, Instant start, Deadline deadline, Pass step) {
    DrainPass pass = step.result();
    String nodeName = step.nodeName();
    c.memory()
        .blockedBy(
            vmi.getMetadata().getUid(), pass.pending() + " pod(s) left: " + pass.stillThere());
    // The next step: when a waiting pod is due again; pods leaving wake it earlier (the watch).
    Duration next =
        pass.nextTry()
            .map(t -> Duration.between(c.clock().instant(), t))
            .filter(d -> d.compareTo(c.settings().retryInterval()) < 0)
            .orElse(c.settings().retryInterval());
    log.atLevel(
            waits.level(
                drainWait(vmi, start),
                List.of(nodeName, pass.pending(), pass.terminating(), pass.blockers())))
        .log(
            "guest node not drained yet vmi={} cluster={} node={} pending={} terminating={} blockers=\"{}\" next={} deadline={}",
            key,
            step.guest().cluster(),
            nodeName,
            pass.pending(),
            pass.terminating(),
            pass.blockers(),
            next,
            DrainStartTime.format(deadline.at()));
    // A budget that refuses for a moment (a rolling workload) and pods that take their time to
    // terminate are a drain's normal course, as kubectl's retries are: a warning only once the
    // drain has waited longer than the retry interval, or when an eviction failed.
    boolean waitedLong =
        !c.clock().instant().isBefore(step.drainBegan().plus(c.settings().retryInterval()));
    if (waitedLong || !pass.failures().isEmpty() || pass.refused()) {
      c.events()
          .warning(
              vmi,
              EventReasons.DRAIN_BLOCKED,
              "Guest node "
                  + nodeName
                  + " not drained yet ("
                  + pass.pending()
                  + " pod(s) left): "
                  + pass.blockers()
                  + "; VMI deleted anyway at "
                  + DrainStartTime.format(deadline.at()));
    }
    if (waitedLong && !pass.blockingBudgets().isEmpty()) {
      step.guest()
          .nodeEvent(
              step.node(), true, EventReasons.DRAIN_BLOCKED, "Drain blocked: " + pass.blockers());
    }
    return requeue(deadline, next.compareTo(MIN_STEP_DELAY) < 0 ? MIN_STEP_DELAY : next);
  }

  /** A failed guest step: told, and retried with backoff capped at the deadline. */
  private Result guestStepFailed(
      String key, VirtualMachineInstance vmi, Deadline deadline, Guest guest, Exception failure) {
    if (failure instanceof GuestAccessException e) {
      return guestFailure(key, vmi, deadline, e);
    }
    if (failure instanceof ApiException e) {
      if (e.getCode() == 409) {
        return conflict(key, vmi, deadline, guest.cluster(), e);
      }
      return guestFailure(
          key,
          vmi,
          deadline,
          GuestAccessException.Reason.GuestAPIError.name(),
          "guest cluster "
              + guest.cluster()
              + ": request failed: "
              + ApiStatus.describeWithoutServerText(e));
    }
    // A bug or an unexpected answer: still capped at the deadline, never a hot loop.
    log.error(
        "unexpected failure vmi={} cluster={} error={}",
        key,
        guest.cluster(),
        failure.getClass().getName(),
        failure);
    return guestFailure(
        key,
        vmi,
        deadline,
        EventReasons.RECONCILE_ERROR,
        "unexpected "
            + failure.getClass().getSimpleName()
            + " while draining (see controller log)");
  }

  /** Cordons and marks the node; returns it as the patch left it. */
  private V1Node cordon(Guest guest, V1Node read, String uid, String vmiName)
      throws GuestAccessException, ApiException {
    V1Node cordoned;
    try {
      cordoned = guest.cordonAndMark(read, uid);
    } catch (GuestAccessException e) {
      if (e.reason() == GuestAccessException.Reason.GuestAPIRefused) {
        // The tenant's admins look at their node: the refusal is told there too.
        guest.nodeEvent(read, true, e.reason().name(), e.getMessage());
      }
      throw e;
    }
    return cordoned != null ? cordoned : read;
  }

  /**
   * @param contractOrigin the Cluster API setting that set the deadline, or null when the drain
   *     timeout or the VMI's own grace time did
   */
  private Result deadlineReached(
      String key,
      VirtualMachineInstance vmi,
      Instant start,
      Deadline deadline,
      String contractOrigin) {
    String uid = vmi.getMetadata().getUid();
    String blocking =
        c.memory().blocker(uid).orElse("unknown (no drain pass seen by this controller instance)");
    String origin =
        contractOrigin != null
            ? contractOrigin
            : EvacuationDeadline.fromCapkGraceTime(deadline, start, c.settings().drainTimeout())
                ? "annotation " + EvictionAnnotations.CAPK_DELETION_GRACE_TIME
                : "drain timeout "
                    + GoDuration.format(c.settings().drainTimeout())
                    + " from start "
                    + DrainStartTime.format(start);
    log.warn(
        "drain deadline passed, deleting vmi={} deadline={} origin=\"{}\" blockers=\"{}\"",
        key,
        DrainStartTime.format(deadline.at()),
        origin,
        blocking);
    c.events()
        .warning(
            vmi,
            EventReasons.DEADLINE_PASSED,
            "Guest node not drained by "
                + DrainStartTime.format(deadline.at())
                + " ("
                + origin
                + "); deleting the VMI anyway. Still blocking: "
                + blocking);
    return delete(key, vmi, start, Outcome.DEADLINE);
  }

  private Result delete(String key, VirtualMachineInstance vmi, Instant start, Outcome outcome) {
    return delete(key, vmi, start, outcome, deleted -> false);
  }

  /**
   * @param outcomeEvent what to record once the delete request has been answered, given whether
   *     this request deleted the VMI; answers true when its event also tells the deletion, so that
   *     no {@code VMIDeleted} event repeats it
   */
  private Result delete(
      String key,
      VirtualMachineInstance vmi,
      Instant start,
      Outcome outcome,
      Predicate<Boolean> outcomeEvent) {
    InfraVmis.DeleteOutcome result;
    try {
      result = c.vmis().deleteExact(vmi);
    } catch (ApiException e) {
      c.metrics().reconcileError(EventReasons.INFRA_API_ERROR);
      // The infra API server's own message says what was refused (verb, resource, user); it holds
      // no
      // credentials, unlike a guest kubeconfig.
      String msg = "deleting the VMI failed: " + ApiStatus.describe(e);
      log.warn(
          "vmi delete failed vmi={} code={} error=\"{}\"", key, e.getCode(), ApiStatus.describe(e));
      c.events().warning(vmi, EventReasons.INFRA_API_ERROR, msg);
      // Past the deadline there is nothing to cap at: plain backoff, bounded.
      return new Result(true, c.memory().backoff(key));
    }
    c.memory().succeeded(key);
    boolean told = outcomeEvent.test(result == InfraVmis.DeleteOutcome.DELETED);
    String uid = vmi.getMetadata().getUid();
    switch (result) {
      case DELETED -> {
        log.info("vmi deleted vmi={} uid={} outcome={}", key, uid, outcome.label);
        if (!told) {
          c.events()
              .normal(
                  vmi,
                  EventReasons.VMI_DELETED,
                  "Deleted (" + outcome.label + ") " + DELETED_SO_THAT);
        }
        c.metrics().evacuationEnded(outcome, Duration.between(start, c.clock().instant()));
      }
      case REPLACED ->
          log.info("vmi replaced before delete, nothing to do vmi={} uid={}", key, uid);
      case GONE -> log.info("vmi already gone vmi={} uid={}", key, uid);
    }
    c.memory().ended(key, uid, false);
    ended(key);
    return DONE;
  }

  /** The VMI's evacuation is over (or the VMI is gone): release what its drain held. */
  void ended(String key) {
    c.guests().evacuationEnded(key);
    migration.ended(key);
  }

  /**
   * KubeVirt cleared {@code evacuationNodeName}: the evacuation was called off, and a later one
   * must get a fresh start and deadline, not this stale one.
   *
   * @return empty when done, else the retry after a failed write
   */
  Optional<Result> callOff(String key, VirtualMachineInstance vmi) {
    c.memory().ended(key, vmi.getMetadata().getUid(), false);
    ended(key);
    try {
      // A live migration of ours moved the VMI (KubeVirt cleared the mark): say so, once.
      vmi = migration.succeeded(key, vmi);
    } catch (ApiException e) {
      return Optional.of(infraFailure(key, vmi, "recording the live migration's end", e, null));
    }
    Map<String, String> clear = new LinkedHashMap<>();
    for (String k :
        List.of(EvictionAnnotations.DRAIN_START_TIME, EvictionAnnotations.EVACUATION_PHASE)) {
      if (Metadata.annotation(vmi, k) != null) {
        clear.put(k, null);
      }
    }
    if (clear.isEmpty()) {
      return Optional.empty();
    }
    try {
      c.vmis().annotate(vmi, clear);
      log.info("evacuation called off, drain start cleared vmi={}", key);
      return Optional.empty();
    } catch (ApiException e) {
      return Optional.of(infraFailure(key, vmi, "clearing the drain start", e, null));
    }
  }

  private Result guestFailure(
      String key, VirtualMachineInstance vmi, Deadline deadline, GuestAccessException e) {
    return guestFailure(key, vmi, deadline, e.reason().name(), e.getMessage());
  }

  private Result guestFailure(
      String key, VirtualMachineInstance vmi, Deadline deadline, String reason, String message) {
    c.metrics().reconcileError(reason);
    c.memory().failedWith(vmi.getMetadata().getUid(), message);
    Duration backoff = c.memory().backoff(key);
    if (REFUSALS.contains(reason) && backoff.compareTo(c.settings().retryInterval()) > 0) {
      // A refusal is asked again once per retry interval at most: the tenant may lift it.
      backoff = c.settings().retryInterval();
    }
    Duration delay = EvacuationDeadline.requeueDelay(deadline, backoff);
    // Retried with backoff while it lasts: the same failure is told once, every change of it too.
    boolean changed = waits.changed(vmi.getMetadata().getUid() + "/failure", reason + message);
    log.atLevel(changed ? Level.WARN : Level.DEBUG)
        .log(
            "evacuation step failed vmi={} reason={} detail=\"{}\" retryIn={} deadline={}",
            key,
            reason,
            message,
            delay,
            DrainStartTime.format(deadline.at()));
    c.events()
        .warning(
            vmi,
            reason,
            message + "; retrying, VMI deleted anyway at " + DrainStartTime.format(deadline.at()));
    return new Result(true, delay);
  }

  /**
   * The guest node changed since it was read: read again at once, a few times in a row; then back
   * off (a node that changes at every look, e.g. another controller fighting over it) and say so.
   */
  private Result conflict(
      String key, VirtualMachineInstance vmi, Deadline deadline, String cluster, ApiException e) {
    int inARow = c.memory().conflicted(key);
    if (inARow <= MAX_QUICK_CONFLICTS) {
      log.debug("guest node changed since read, reading again vmi={} cluster={}", key, cluster);
      return requeue(deadline, CONFLICT_RETRY);
    }
    return guestFailure(
        key,
        vmi,
        deadline,
        EventReasons.GUEST_NODE_CONFLICTS,
        "guest cluster "
            + cluster
            + ": "
            + e.getMessage()
            + ", "
            + inARow
            + " times in a row; backing off");
  }

  /** As above; with a known deadline, the retry never comes later than it. */
  private Result infraFailure(
      String key, VirtualMachineInstance vmi, String what, ApiException e, Deadline deadline) {
    if (e.getCode() == 404) {
      return DONE; // the VMI is gone
    }
    if (e.getCode() == 409 && c.memory().conflicted(key) <= MAX_QUICK_CONFLICTS) {
      return new Result(true, CONFLICT_RETRY); // our cache was stale: read again
    }
    // A refusal (an admission policy on VMIs, RBAC), or conflicts again and again: named, and
    // backed off.
    c.metrics().reconcileError(EventReasons.INFRA_API_ERROR);
    log.warn(
        "infra API call failed vmi={} step=\"{}\" code={} error=\"{}\"",
        key,
        what,
        e.getCode(),
        ApiStatus.describe(e));
    c.events()
        .warning(vmi, EventReasons.INFRA_API_ERROR, what + " failed: " + ApiStatus.describe(e));
    // Without a recorded start there is no deadline yet: plain bounded backoff.
    Duration delay = c.memory().backoff(key);
    return new Result(
        true, deadline == null ? delay : EvacuationDeadline.requeueDelay(deadline, delay));
  }

  private Result requeue(Deadline deadline, Duration wanted) {
    return new Result(true, EvacuationDeadline.requeueDelay(deadline, wanted));
  }

  /** What a step of an evacuation came to: the next step goes on, or the evacuation waits. */
  sealed interface StepOutcome {

    /** Go on to the next step with {@code vmi} as this step left it. */
    record Proceed(VirtualMachineInstance vmi) implements StepOutcome {}

    /**
     * The evacuation waits in {@code phase} for what {@code blocker} names (said in the deadline
     * warning if it lasts): look again after {@code retry}, never past the deadline.
     */
    record Wait(EvacuationPhase phase, String blocker, Duration retry) implements StepOutcome {}
  }

  /**
   * The drain start annotation's value: RFC 3339 in UTC, second precision (what Kubernetes writes
   * for its own timestamps), and what to do with it ({@link #decide}). Pure.
   */
  public static final class DrainStartTime {
    private DrainStartTime() {}

    /** What an annotation value says. */
    public sealed interface Parsed permits Absent, Valid, Malformed {}

    /** No annotation: the drain starts now. */
    public record Absent() implements Parsed {}

    /** A usable start time. */
    public record Valid(Instant start) implements Parsed {}

    /**
     * Present but unusable: replaced by now (with a Warning). The raw value is kept for the
     * message.
     */
    public record Malformed(String raw) implements Parsed {}

    public static String format(Instant instant) {
      return DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.SECONDS));
    }

    /**
     * Parses an RFC 3339 timestamp with any offset (normalised to UTC). A time in the future
     * (beyond the tolerated clock skew) is malformed: honouring it would push the deadline out
     * arbitrarily.
     */
    public static Parsed parse(String raw, Instant now, java.time.Duration maxClockSkew) {
      if (raw == null) {
        return new Absent();
      }
      return parseRfc3339(raw)
          .filter(instant -> !instant.isAfter(now.plus(maxClockSkew)))
          .<Parsed>map(Valid::new)
          .orElse(new Malformed(raw));
    }

    /**
     * RFC 3339 (an ISO 8601 profile): {@code 2024-05-01T10:00:00Z}, fractions and offsets allowed.
     */
    public static Optional<Instant> parseRfc3339(String raw) {
      if (raw == null || raw.isBlank()) {
        return Optional.empty();
      }
      try {
        return Optional.of(
            OffsetDateTime.parse(raw.trim(), DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant());
      } catch (DateTimeParseException e) {
        return Optional.empty();
      }
    }

    /**
     * What to do with the drain start annotation of a VMI being evacuated, given what it says now
     * and the earliest start this controller has seen or written for the VMI's UID. The deadline
     * only ever moves earlier: a start that was removed, moved later or made malformed in the
     * middle of a drain is restored, never followed.
     */
    public sealed interface Decision {

      /** The start the deadline counts from. */
      Instant start();

      /** The annotation holds a usable start, no later than any we knew: keep it. */
      record Keep(Instant start) implements Decision {}

      /**
       * No start known and none recorded: a new evacuation, starting when this process first saw
       * the mark (now, if it did not see it); write it.
       */
      record Begin(Instant start) implements Decision {}

      /**
       * No start known and the annotation is unusable: replace it by the mark's first sighting (or
       * now), with a warning.
       */
      record ReplaceMalformed(Instant start, String raw) implements Decision {}

      /**
       * Mid-drain, the annotation no longer holds the earliest start: write that back, with a
       * warning.
       */
      record Restore(Instant start, Tampering tampering, String raw) implements Decision {}

      /** How the annotation was changed after we knew an earlier start. */
      enum Tampering {
        REMOVED("was removed"),
        MOVED_LATER("was moved later"),
        MALFORMED("was made unusable");

        public final String phrase;

        Tampering(String phrase) {
          this.phrase = phrase;
        }
      }
    }

    /**
     * @param annotation what the annotation says now (parsed against the same {@code now})
     * @param earliestKnown the earliest start seen or written for this VMI's UID by this process
     * @param markSeen when this process first saw the VMI's current evacuation mark (the informer's
     *     event): a new evacuation starts then, not when a worker got to it
     */
    static Decision decide(
        Parsed annotation,
        Optional<Instant> earliestKnown,
        Optional<Instant> markSeen,
        Instant now) {
      // Never later than now (a clock that stepped back must not push the start into the future).
      Instant from = markSeen.filter(seen -> seen.isBefore(now)).orElse(now);
      // Second precision, as the annotation is written: what we remember equals what we wrote.
      Instant begin = from.truncatedTo(ChronoUnit.SECONDS);
      if (earliestKnown.isEmpty()) {
        if (annotation instanceof Valid valid) {
          return new Decision.Keep(valid.start());
        }
        if (annotation instanceof Malformed malformed) {
          return new Decision.ReplaceMalformed(begin, malformed.raw());
        }
        return new Decision.Begin(begin);
      }
      Instant known = earliestKnown.get();
      if (annotation instanceof Valid valid) {
        // An earlier start shortens the deadline: that is always allowed.
        return valid.start().isAfter(known)
            ? new Decision.Restore(known, Decision.Tampering.MOVED_LATER, format(valid.start()))
            : new Decision.Keep(valid.start());
      }
      if (annotation instanceof Malformed malformed) {
        return new Decision.Restore(known, Decision.Tampering.MALFORMED, malformed.raw());
      }
      return new Decision.Restore(known, Decision.Tampering.REMOVED, null);
    }
  }

  /**
   * An evacuation's deadline and what follows from it for the reconciler: when the evacuation must
   * end whatever the guest says (start + drain timeout, or the deadline CAPK's own controller
   * already wrote: clusters migrating from CAPK keep their promise), when to look again, how long a
   * drain pass may last. Pure, given the clock.
   */
  static final class EvacuationDeadline {
    private EvacuationDeadline() {}

    /** Requeue this much after the deadline so the clock has surely passed it. */
    static final Duration DEADLINE_MARGIN = Duration.ofMillis(200);

    static final Duration MIN_PASS = Duration.ofSeconds(1);

    /**
     * @param start the recorded drain start
     * @param timeout the global drain timeout
     * @param capkGraceTime the raw value of CAPK's {@code vmi-deletion-grace-time} annotation, if
     *     any; ignored when unparsable, and honoured only when earlier than start + timeout: a
     *     grace time far in the future must not lift the global timeout
     */
    static Deadline of(Instant start, Duration timeout, String capkGraceTime, Clock clock) {
      Instant ours = start.plus(timeout);
      Optional<Instant> capk = DrainStartTime.parseRfc3339(capkGraceTime);
      return Deadline.at(capk.isPresent() && capk.get().isBefore(ours) ? capk.get() : ours, clock);
    }

    /**
     * True when CAPK's grace time, not start + timeout, set {@code deadline}: it can only be
     * earlier.
     */
    static boolean fromCapkGraceTime(Deadline deadline, Instant start, Duration timeout) {
      return deadline.at().isBefore(start.plus(timeout));
    }

    /**
     * The delay before looking again: the wanted delay, but never later than the deadline (plus a
     * small margin so the next reconcile sees it passed), and never negative.
     */
    static Duration requeueDelay(Deadline deadline, Duration wanted) {
      Duration w = wanted.isNegative() ? Duration.ZERO : wanted;
      Duration untilDeadline = deadline.remaining().plus(DEADLINE_MARGIN);
      return w.compareTo(untilDeadline) < 0 ? w : untilDeadline;
    }

    /**
     * How long one drain pass may block a worker: the per-attempt timeout, cut to what is left
     * before the deadline, and at least a second so that a pass can do something.
     */
    static Duration passTimeout(Deadline deadline, Duration attemptTimeout) {
      Duration t = deadline.cap(attemptTimeout);
      return t.compareTo(MIN_PASS) < 0 ? MIN_PASS : t;
    }
  }
}
