package dev.capk.vmieviction.eviction;

import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.CONFLICT_RETRY;
import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.DONE;
import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.MAX_CLOCK_SKEW;
import static dev.capk.vmieviction.workload.GuestAccessException.Reason.ClusterNamespaceRefused;
import static dev.capk.vmieviction.workload.GuestAccessException.Reason.ClusterNotFound;
import static dev.capk.vmieviction.workload.GuestAccessException.Reason.KubeconfigSecretNotFound;
import static dev.capk.vmieviction.workload.GuestAccessException.Reason.MissingClusterLabel;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.eviction.EvictionMetrics.EvictionResult;
import dev.capk.vmieviction.eviction.EvictionMetrics.Outcome;
import dev.capk.vmieviction.eviction.Guest.DrainPass;
import dev.capk.vmieviction.eviction.Guest.GuestNodeMatch;
import dev.capk.vmieviction.eviction.Guest.GuestNodeMatch.NodeReadiness;
import dev.capk.vmieviction.eviction.VmiEvents.Told;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
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
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * One evacuation, as the list of its {@link #steps} read top to bottom, and the uncordon after it
 * ({@link #callOff}). Each step answers one {@link StepOutcome}; {@link #end} turns every outcome
 * but {@code Proceed} into this reconcile's result (one requeue policy); a step that throws takes
 * the one failure path, {@link #failed}. No step waits: the next one comes through the work queue,
 * when a pod is due again or when the watch on the guest node's pods sees pods leave. The pure
 * decisions live in {@link DrainStartTime}, {@link EvacuationDeadline} and {@link DrainPass}.
 */
final class Evacuator {

  private static final Logger log = LoggerFactory.getLogger(Evacuator.class);

  /** The soonest a drain's next step comes back on its own (more pods due than one step sends). */
  private static final Duration MIN_STEP_DELAY = Duration.ofMillis(10);

  /** Conflicts on one VMI's guest node in a row that are read again at once, before backing off. */
  static final int MAX_QUICK_CONFLICTS = 3;

  /** Answers that will not change by asking again soon: backed off up to the retry interval. */
  private static final Set<String> REFUSALS =
      Set.of(GuestAccessException.Reason.GuestAPIRefused.name(), VmiEvents.GUEST_NODE_CONFLICTS);

  /** No guest cluster to go to: nothing of ours can be there, no uncordon check to make. */
  private static final Set<GuestAccessException.Reason> NO_GUEST =
      EnumSet.of(
          MissingClusterLabel, ClusterNamespaceRefused, ClusterNotFound, KubeconfigSecretNotFound);

  /** Why the VMI is deleted, said once per evacuation by its last event. */
  private static final String DELETED_SO_THAT = "so that KubeVirt recreates it on another node";

  private final StepContext c;
  private final MachineContractCheck contracts;
  private final LiveMigrationStep migration;

  /** The evacuation, top to bottom; {@code doing} names a step's infra writes when they fail. */
  private final List<Step> steps;

  Evacuator(
      StepContext c,
      MachineContractCheck contracts,
      TenantAdmission admission,
      LiveMigrationStep migration) {
    this.c = c;
    this.contracts = contracts;
    this.migration = migration;
    this.steps =
        List.of(
            new Step("recording the drain start", this::start),
            new Step("reading Cluster API's contract", this::contract),
            // Tenant safety: one control-plane VMI of a tenant at a time, the per-cluster limit.
            new Step(
                "recording the admission",
                r ->
                    admission.check(
                        r.key, r.vmi, r.start, r.deadline, r.contract.evacuationLimit())),
            // With live migration preferred the VMI moves; the drain after it is the fallback.
            new Step(
                "the live migration step",
                r -> migration.step(r.key, r.vmi, r.start, r.deadline, r.contract.liveMigration())),
            new Step("connecting to the guest cluster", this::enterGuest),
            new Step("cordoning the guest node", this::cordon),
            new Step("the drain step", this::drain));
  }

  /** What a step came to. Every delay is capped at the deadline. */
  sealed interface StepOutcome {

    /** Go on to the next step with {@code vmi} as this step left it. */
    record Proceed(VirtualMachineInstance vmi) implements StepOutcome {}

    /** Waits in {@code phase} for {@code blocker} (named in the deadline warning if it lasts). */
    record Wait(EvacuationPhase phase, String blocker, Duration retry) implements StepOutcome {}

    record RequeueAfter(Duration delay) implements StepOutcome {}

    record Delete(Outcome outcome) implements StepOutcome {}
  }

  @FunctionalInterface
  private interface Action {
    StepOutcome run(Run r) throws GuestAccessException, ApiException;
  }

  private record Step(String doing, Action action) {}

  /** One reconcile of an evacuation: what its steps found so far. */
  private static final class Run {
    final String key;
    VirtualMachineInstance vmi;
    Instant start;
    Deadline deadline;
    MachineContractCheck.Applied contract;
    Guest guest; // set once entered; left when the run ends
    V1Node node;
    StepContext.Evacuation e; // this process's memory of it, once its start is known
    DrainPass pass;
    boolean deleting;

    Run(String key, VirtualMachineInstance vmi) {
      this.key = key;
      this.vmi = vmi;
    }

    String uid() {
      return vmi.getMetadata().getUid();
    }

    String nodeName() {
      return node.getMetadata().getName();
    }
  }

  /** One reconcile of the evacuation of a VMI that KubeVirt marked, strategy External. */
  Result evacuate(String key, VirtualMachineInstance vmi) {
    Run r = new Run(key, vmi);
    try {
      for (Step step : steps) {
        StepOutcome outcome;
        try {
          outcome = step.action().run(r);
        } catch (GuestAccessException | ApiException | RuntimeException e) {
          return failed(r, step.doing(), e);
        }
        if (!(outcome instanceof StepOutcome.Proceed proceed)) {
          return end(r, outcome);
        }
        r.vmi = proceed.vmi();
      }
      throw new IllegalStateException("the drain step ends every evacuation's reconcile");
    } finally {
      if (r.guest != null) {
        r.guest.leaveStep();
      }
    }
  }

  private Result end(Run r, StepOutcome outcome) {
    if (outcome instanceof StepOutcome.Wait w) {
      inPhase(r, w.phase());
      r.e.blocker = w.blocker();
      r.e.failure = null;
      return requeue(r, w.retry());
    }
    if (outcome instanceof StepOutcome.RequeueAfter a) {
      return requeue(r, a.delay());
    }
    return delete(r, ((StepOutcome.Delete) outcome).outcome());
  }

  /** The one requeue policy: never past the deadline, but a failed delete has none to cap at. */
  private Result requeue(Run r, Duration wanted) {
    boolean capped = r.deadline != null && !r.deleting;
    return new Result(true, capped ? EvacuationDeadline.requeueDelay(r.deadline, wanted) : wanted);
  }

  /** Records the drain start, or restores it when it was changed mid-drain; checks the deadline. */
  private StepOutcome start(Run r) throws ApiException {
    StepContext.Evacuation e = c.evacuation(r.key, r.uid());
    DrainStartTime.Decision d =
        DrainStartTime.decide(
            LenientJson.annotation(r.vmi, EvictionAnnotations.DRAIN_START_TIME),
            Optional.ofNullable(e.start),
            // The drain starts when the mark was seen, however long this VMI waited for a worker.
            c.firstSeen(r.uid()),
            c.clock.instant());
    r.start = d.start();
    String capkGrace = LenientJson.annotation(r.vmi, EvictionAnnotations.CAPK_DELETION_GRACE_TIME);
    r.deadline = EvacuationDeadline.of(r.start, c.settings.drainTimeout(), capkGrace, c.clock);
    String start = DrainStartTime.format(r.start);
    String deadline = DrainStartTime.format(r.deadline.at());
    if (d.kind() != DrainStartTime.Kind.KEEP) {
      Map<String, String> changes = new HashMap<>();
      changes.put(EvictionAnnotations.DRAIN_START_TIME, start);
      if (!d.kind().restores()) {
        // A new evacuation: the common course is the drain, recorded with the start at no cost.
        changes.put(EvictionAnnotations.EVACUATION_PHASE, EvacuationPhase.Draining.name());
      }
      r.vmi = c.vmis.annotate(r.vmi, changes);
    }
    // Never later than the start it knew: the decision restores the earliest.
    e.start = r.start;
    r.e = e;
    String shown = d.raw() == null ? null : VmiEvictionReconciler.shorten(d.raw());
    if (d.kind().restores()) {
      String was = shown == null ? "" : " (to \"" + shown + "\")";
      Told.START_RESTORED.to(c.events, r.vmi, d.kind().phrase, r.key, start, deadline, was);
    }
    if (d.kind() == DrainStartTime.Kind.MALFORMED) {
      Told.START_INVALID.to(c.events, r.vmi, r.key, shown, start);
    }
    if (d.kind() == DrainStartTime.Kind.BEGIN || d.kind() == DrainStartTime.Kind.MALFORMED) {
      c.metrics.evacuationStarted();
      String infraNode = Eligibility.evacuationNodeName(r.vmi);
      Told.STARTED.to(c.events, r.vmi, r.key, infraNode, start, deadline);
    }
    r.e.underWay(r.deadline.at());
    // The deadline is checked before anything touches the guest cluster.
    return r.deadline.passed() ? deadlineReached(r, null) : new StepOutcome.Proceed(r.vmi);
  }

  /**
   * Cluster API's contract (MachineContract): may move the deadline earlier, leave a paused
   * Cluster's guest untouched (a wait, as admission's, until the deadline), or skip the drain.
   */
  private StepOutcome contract(Run r) throws GuestAccessException {
    r.contract = contracts.apply(c, r.key, r.vmi, r.start, r.deadline);
    r.deadline = r.contract.deadline();
    r.e.underWay(r.deadline.at());
    if (r.deadline.passed()) {
      return deadlineReached(r, r.contract.origin().orElse(null));
    }
    return switch (r.contract.step()) {
      case SKIP_DRAIN -> new StepOutcome.Delete(Outcome.DRAIN_EXCLUDED);
      case HOLD_PAUSED ->
          new StepOutcome.Wait(
              EvacuationPhase.Paused, "the Cluster is paused", c.settings.retryInterval());
      case DRAIN -> new StepOutcome.Proceed(r.vmi);
    };
  }

  /** Enters one of the tenant's guest steps, or comes back later when it may not talk to it now. */
  private StepOutcome enterGuest(Run r) throws GuestAccessException {
    r.vmi = inPhase(r, EvacuationPhase.Draining);
    // From here on no guest request may run past the deadline.
    Guest guest = c.guests.connect(r.vmi, Optional.of(r.deadline.remaining()));
    boolean woken = c.guests.takeWake(r.key);
    Optional<Duration> throttled = guest.tryEnterStep(woken);
    log.debug(
        "guest step vmi={} cluster={} woken={} throttledFor={}",
        r.key,
        guest.cluster(),
        woken,
        throttled.orElse(Duration.ZERO));
    if (throttled.isPresent()) {
      c.metrics.throttled();
      return new StepOutcome.RequeueAfter(throttled.get());
    }
    r.guest = guest;
    // Cordoning marks the node for this UID: from now on the uncordon check must look again.
    c.guests.unmarked.invalidate(r.uid());
    return new StepOutcome.Proceed(r.vmi);
  }

  /**
   * Finds the VMI's guest node (none: nothing to drain, the VMI is deleted) and cordons it with our
   * mark unless it is cordoned already. Nodes read are shared, never changed here: the next steps
   * get the node as the cordon left it.
   */
  private StepOutcome cordon(Run r) throws GuestAccessException, ApiException {
    String vmiName = r.vmi.getMetadata().getName();
    Guest guest = r.guest;
    Optional<V1Node> found = guest.findNode(vmiName, true);
    if (found.isEmpty()) {
      String providerId = GuestNodeMatch.providerIdFor(vmiName);
      Told.NODE_NOT_FOUND.to(c.events, r.vmi, r.key, guest.cluster(), vmiName, providerId);
      return new StepOutcome.Delete(Outcome.NODE_MISSING);
    }
    r.node = found.get();
    if (Cordoner.unschedulable(r.node)) {
      return new StepOutcome.Proceed(r.vmi);
    }
    V1Node cordoned = guest.cordonAndMark(r.node, r.uid()); // a refusal: told on the node too
    r.node = cordoned != null ? cordoned : r.node;
    Told.NODE_CORDONED.to(c.events, r.vmi, r.key, guest.cluster(), r.nodeName());
    String infraNode = Eligibility.evacuationNodeName(r.vmi);
    String why = "Cordoned: infra VMI " + r.key + " is being evacuated from node " + infraNode;
    guest.nodeEvent(r.node, false, VmiEvents.CORDONED, why);
    return new StepOutcome.Proceed(r.vmi);
  }

  /** Advances the guest node's drain by one step: the evictions that are due, none waited for. */
  private StepOutcome drain(Run r) throws GuestAccessException, ApiException {
    boolean unreachable = NodeReadiness.of(r.node) == NodeReadiness.UNREACHABLE;
    Duration timeout = EvacuationDeadline.passTimeout(r.deadline, c.settings.attemptTimeout());
    Instant stepStart = c.clock.instant();
    // After a hold (tenant protection) the drain's own waiting counts, not the evacuation's.
    if (r.e.drainBegan == null) {
      r.e.drainBegan = stepStart;
    }
    DrainPass pass = r.pass = r.guest.drainStep(r.key, r.nodeName(), timeout, unreachable);
    c.metrics.drainStep(Duration.between(stepStart, c.clock.instant()));
    c.metrics.evictions(EvictionResult.BLOCKED_BY_BUDGET, pass.step().blockingBudgets().size());
    c.metrics.evictions(EvictionResult.ERROR, pass.step().failed().size());
    c.succeeded(r.key);
    // The drain's waits are looked at again at every step: told once per change.
    String wait = r.uid() + "/" + DrainStartTime.format(r.start) + "/drain";
    if (pass.refused()) {
      List<String> refused = pass.refusals();
      Level level = c.changed(wait, refused) ? Level.WARN : Level.DEBUG;
      String joined = String.join("; ", refused);
      Told.REFUSED.to(
          c.events, level, r.vmi, r.key, r.guest.cluster(), r.nodeName(), refused, joined);
      return new StepOutcome.Wait(
          EvacuationPhase.Draining,
          pass.pending() + " pod(s) left: " + pass.blockers(),
          c.settings.retryInterval());
    }
    if (pass.step().complete()) {
      c.metrics.evictions(EvictionResult.EVICTED, pass.step().evicted());
      // The delete first, the events after it: nothing stands between the last pod leaving and
      // the VMI's deletion but the delete request itself.
      return new StepOutcome.Delete(Outcome.DRAINED);
    }
    return notDrainedYet(r, wait);
  }

  private StepOutcome notDrainedYet(Run r, String wait) {
    DrainPass pass = r.pass;
    Instant now = c.clock.instant();
    // The next step: when a waiting pod is due again; pods leaving wake it earlier (the watch).
    Duration next =
        pass.step()
            .nextTry()
            .map(t -> Duration.between(now, t))
            .filter(d -> d.compareTo(c.settings.retryInterval()) < 0)
            .orElse(c.settings.retryInterval());
    int terminating = pass.step().terminating().size();
    String deadline = DrainStartTime.format(r.deadline.at());
    log.atLevel(c.level(wait, List.of(r.nodeName(), pass.pending(), terminating, pass.blockers())))
        .log(
            "guest node not drained yet vmi={} cluster={} node={} pending={} terminating={} blockers=\"{}\" next={} deadline={}",
            r.key,
            r.guest.cluster(),
            r.nodeName(),
            pass.pending(),
            terminating,
            pass.blockers(),
            next,
            deadline);
    // A budget that refuses for a moment (a rolling workload) and pods that take their time to
    // terminate are a drain's normal course, as kubectl's retries are: a warning only once the
    // drain has waited longer than the retry interval, or when an eviction failed.
    boolean waitedLong = !now.isBefore(r.e.drainBegan.plus(c.settings.retryInterval()));
    if (waitedLong || !pass.step().failed().isEmpty()) {
      String message =
          String.format(
              "Guest node %s not drained yet (%d pod(s) left): %s; VMI deleted anyway at %s",
              r.nodeName(), pass.pending(), pass.blockers(), deadline);
      c.events.record(r.vmi, true, VmiEvents.DRAIN_BLOCKED, message);
    }
    if (waitedLong && !pass.step().blockingBudgets().isEmpty()) {
      String why = "Drain blocked: " + pass.blockers();
      r.guest.nodeEvent(r.node, true, VmiEvents.DRAIN_BLOCKED, why);
    }
    return new StepOutcome.Wait(
        EvacuationPhase.Draining,
        pass.pending() + " pod(s) left: " + pass.stillThere(),
        next.compareTo(MIN_STEP_DELAY) < 0 ? MIN_STEP_DELAY : next);
  }

  /** {@code contractOrigin}: the Cluster API setting that set the deadline, if one did. */
  private StepOutcome deadlineReached(Run r, String contractOrigin) {
    Duration timeout = c.settings.drainTimeout();
    String blocking =
        r.e.blocker().orElse("unknown (no drain pass seen by this controller instance)");
    String origin =
        contractOrigin != null
            ? contractOrigin
            : EvacuationDeadline.fromCapkGraceTime(r.deadline, r.start, timeout)
                ? "annotation " + EvictionAnnotations.CAPK_DELETION_GRACE_TIME
                : "drain timeout "
                    + GoDuration.format(timeout)
                    + " from start "
                    + DrainStartTime.format(r.start);
    String deadline = DrainStartTime.format(r.deadline.at());
    Told.DEADLINE.to(c.events, r.vmi, r.key, deadline, origin, blocking);
    return new StepOutcome.Delete(Outcome.DEADLINE);
  }

  /** Deletes the VMI (UID precondition, Foreground); the evacuation ends with {@code outcome}. */
  private Result delete(Run r, Outcome outcome) {
    InfraVmis.DeleteOutcome result;
    try {
      result = c.vmis.deleteExact(r.vmi);
    } catch (ApiException e) {
      r.deleting = true;
      return failed(r, "deleting the VMI", e);
    }
    boolean deleted = result == InfraVmis.DeleteOutcome.DELETED;
    if (!deleted) {
      // GONE, or REPLACED: a new VMI of that name exists, not ours to delete.
      log.info("vmi not deleted vmi={} uid={} found={}", r.key, r.uid(), result);
    }
    if (outcome == Outcome.DRAINED) {
      // One event says both (drained, then deleted): VMIDeleted would repeat it.
      String then = deleted ? "; VMI deleted " + DELETED_SO_THAT : "";
      Told.DRAINED.to(c.events, r.vmi, r.key, r.nodeName(), r.pass.step().summary(), then);
      String why = "Drained for the evacuation of infra VMI " + r.key;
      r.guest.nodeEvent(r.node, false, VmiEvents.DRAIN_SUCCEEDED, why);
    } else if (deleted) {
      Told.DELETED.to(c.events, r.vmi, r.key, outcome.label, DELETED_SO_THAT);
    }
    if (deleted) {
      c.metrics.evacuationEnded(outcome, Duration.between(r.start, c.clock.instant()));
    }
    ended(r.key, false);
    return DONE;
  }

  /**
   * The one failure path. An infra call that failed: the VMI gone ends it; a 409 (usually our own
   * stale cache) or a guest node that changed since read is read again at once, a few times in a
   * row; anything else (a refusal, an admission policy, RBAC, the guest unreachable, a bug) is
   * named in a Warning and retried with backoff, never past the deadline.
   */
  private Result failed(Run r, String doing, Exception cause) {
    boolean infra = r.guest == null || r.deleting;
    int code = cause instanceof ApiException e ? e.getCode() : -1;
    if (infra && cause instanceof RuntimeException e) {
      throw e;
    }
    if (infra && code == 404) {
      return DONE; // the VMI is gone
    }
    int inARow = code == 409 ? c.conflicted(r.key) : 0;
    if (code == 409 && inARow <= MAX_QUICK_CONFLICTS) {
      log.debug("changed since read, reading again vmi={} step=\"{}\"", r.key, doing);
      return requeue(r, CONFLICT_RETRY);
    }
    if (infra && cause instanceof ApiException e) {
      c.metrics.reconcileError(VmiEvents.INFRA_API_ERROR);
      Told.INFRA_FAILED.to(c.events, r.vmi, r.key, doing, code, RawApi.describe(e));
      return requeue(r, c.backoff(r.key));
    }
    if (cause instanceof GuestAccessException e) {
      return guestFailed(r, e.reason().name(), e.getMessage());
    }
    String cluster = "guest cluster " + r.guest.cluster();
    if (code == 409) {
      String times = ", " + inARow + " times in a row; backing off";
      return guestFailed(
          r, VmiEvents.GUEST_NODE_CONFLICTS, cluster + ": " + cause.getMessage() + times);
    }
    if (cause instanceof ApiException e) {
      String what = ": request failed: " + RawApi.describeWithoutServerText(e);
      return guestFailed(r, GuestAccessException.Reason.GuestAPIError.name(), cluster + what);
    }
    // A bug or an unexpected answer: still capped at the deadline, never a hot loop.
    log.error(
        "unexpected failure vmi={} cluster={} error={}",
        r.key,
        r.guest.cluster(),
        cause.getClass().getName(),
        cause);
    return guestFailed(
        r,
        VmiEvents.RECONCILE_ERROR,
        "unexpected " + cause.getClass().getSimpleName() + " while draining (see controller log)");
  }

  private Result guestFailed(Run r, String reason, String message) {
    Duration after = c.backoff(r.key);
    if (REFUSALS.contains(reason) && after.compareTo(c.settings.retryInterval()) > 0) {
      after = c.settings.retryInterval(); // asked again once per interval: the tenant may lift it
    }
    boolean refused = reason.equals(GuestAccessException.Reason.GuestAPIRefused.name());
    if (r.e == null) {
      // The uncordon check, retried with backoff while the guest cannot be used: told once per
      // cause; a refusal, which asking again will not lift, is named in a Warning.
      Level level = c.level(r.uid(), reason + ": " + message);
      if (refused) {
        Told.UNCORDON_REFUSED.to(c.events, level, r.vmi, r.key, reason, message);
      } else {
        log.atLevel(level)
            .log("uncordon check postponed vmi={} reason={} detail=\"{}\"", r.key, reason, message);
      }
      return new Result(true, after);
    }
    if (refused && r.node != null) {
      // Only a node patch is refused: the tenant's admins look at their node, told there too.
      r.guest.nodeEvent(r.node, true, reason, message);
    }
    c.metrics.reconcileError(reason);
    r.e.failure = message;
    Result retry = requeue(r, after);
    // Retried with backoff while it lasts: the same failure is told once, every change of it too.
    Level level = c.changed(r.uid() + "/failure", reason + message) ? Level.WARN : Level.DEBUG;
    after = retry.getRequeueAfter();
    String deadline = DrainStartTime.format(r.deadline.at());
    Told.STEP_FAILED.to(c.events, level, r.vmi, r.key, reason, message, after, deadline);
    return retry;
  }

  /**
   * Records the evacuation's phase on the VMI (what {@code status} reads) when it changed; a failed
   * write never holds the evacuation, its next step writes again. Returns the VMI as it left it.
   */
  private VirtualMachineInstance inPhase(Run r, EvacuationPhase phase) {
    r.e.phase = phase;
    if (phase.name().equals(LenientJson.annotation(r.vmi, EvictionAnnotations.EVACUATION_PHASE))) {
      return r.vmi;
    }
    try {
      return c.vmis.annotate(r.vmi, EvictionAnnotations.EVACUATION_PHASE, phase.name());
    } catch (ApiException e) {
      log.debug(
          "phase not recorded vmi={} phase={} error=\"{}\"", r.key, phase, RawApi.describe(e));
      return r.vmi;
    }
  }

  /** Over, or the VMI gone: forget it (but its earliest start, with {@code keepStart}). */
  void ended(String key, boolean keepStart) {
    c.ended(key, keepStart);
    c.succeeded(key);
  }

  /**
   * Not being evacuated: if KubeVirt cleared the mark, a later evacuation must get a fresh start
   * and deadline; then, once the recreated VMI runs, the uncordon check ({@link #uncordon}).
   */
  Result callOff(String key, VirtualMachineInstance vmi) {
    // The backoff is kept: a write refused again and again backs off.
    c.ended(key, false);
    Run r = new Run(key, vmi);
    String doing = "recording the live migration's end";
    try {
      // A live migration of ours moved the VMI (KubeVirt cleared the mark): say so, once.
      r.vmi = migration.succeeded(key, vmi);
      Map<String, String> clear = new HashMap<>();
      Stream.of(EvictionAnnotations.DRAIN_START_TIME, EvictionAnnotations.EVACUATION_PHASE)
          .filter(k -> LenientJson.annotation(r.vmi, k) != null)
          .forEach(k -> clear.put(k, null));
      if (!clear.isEmpty()) {
        doing = "clearing the drain start";
        c.vmis.annotate(r.vmi, clear);
        log.info("evacuation called off, drain start cleared vmi={}", key);
      }
      r.vmi = vmi;
      if (vmi.getStatus() == null
          || !VirtualMachineInstanceStatus.PHASE_RUNNING.equals(vmi.getStatus().getPhase())
          || c.guests.unmarked.getIfPresent(r.uid()) != null) {
        return DONE; // not running (an update will come when it does), or known to carry no mark
      }
      doing = "the uncordon check";
      try {
        r.guest = c.guests.connect(vmi, Optional.empty());
      } catch (GuestAccessException e) {
        if (!NO_GUEST.contains(e.reason())) {
          throw e;
        }
        // No guest cluster to go to: nothing of ours can be there. Not an error for this VMI.
        c.guests.unmarked.put(r.uid(), true);
        return DONE;
      }
      return uncordon(r);
    } catch (GuestAccessException | ApiException e) {
      return failed(r, doing, e);
    }
  }

  /**
   * Finds the VMI's guest node and uncordons it where {@link UncordonDecision} says so: only a node
   * this controller cordoned (the mark says whose cordon it is), once the VMI runs again and the
   * node is Ready.
   */
  private Result uncordon(Run r) throws GuestAccessException, ApiException {
    // The evacuation's node watch while it runs, else one GET: a check starts no watch.
    Optional<V1Node> found = r.guest.findNode(r.vmi.getMetadata().getName(), false);
    UncordonDecision decision =
        found.map(n -> UncordonDecision.of(n, r.vmi)).orElse(UncordonDecision.NOT_OURS);
    if (decision == UncordonDecision.NOT_OURS) {
      return noMark(r.key, r.uid());
    }
    r.node = found.get();
    if (decision == UncordonDecision.WAIT) {
      // Looked at again every retry interval until the node is Ready (from its watch from now
      // on): told once per node.
      r.guest.watchNode(r.nodeName());
      log.atLevel(c.level(r.uid(), r.nodeName()))
          .log("guest node not ready for uncordon yet vmi={} node={}", r.key, r.nodeName());
      return new Result(true, c.settings.retryInterval());
    }
    r.guest.unmark(r.node); // uncordons only a node cordoned as read: REMOVE_MARK removes the mark
    if (decision == UncordonDecision.UNCORDON) {
      Told.NODE_UNCORDONED.to(c.events, r.vmi, r.key, r.guest.cluster(), r.nodeName());
      String why = "Uncordoned: infra VMI " + r.key + " runs again";
      r.guest.nodeEvent(r.node, false, VmiEvents.UNCORDONED, why);
    } else {
      log.info(
          "guest node already schedulable, mark removed vmi={} cluster={} node={}",
          r.key,
          r.guest.cluster(),
          r.nodeName());
    }
    // The node is back: a VMI of the same Cluster held by the quorum guard may go now.
    String cluster = LenientJson.label(r.vmi, CapkLabels.CLUSTER_NAME);
    if (cluster != null) {
      c.waitOver(r.vmi.getMetadata().getNamespace() + "/" + cluster, null);
    }
    return noMark(r.key, r.uid());
  }

  /** Nothing (more) of ours on this VMI's node: no need to look again. */
  private Result noMark(String key, String uid) {
    c.forget(uid);
    c.guests.unmarked.put(uid, true);
    c.succeeded(key);
    return DONE;
  }

  /** The drain start annotation's value (RFC 3339, UTC, seconds, as Kubernetes writes times). */
  public static final class DrainStartTime {
    private DrainStartTime() {}

    public static String format(Instant instant) {
      return instant.truncatedTo(ChronoUnit.SECONDS).toString(); // ISO_INSTANT
    }

    /**
     * The usable start an annotation value holds, if any. A time in the future (beyond the
     * tolerated clock skew) is not: honouring it would push the deadline out arbitrarily.
     */
    public static Optional<Instant> parse(String raw, Instant now, Duration maxClockSkew) {
      return parseRfc3339(raw).filter(instant -> !instant.isAfter(now.plus(maxClockSkew)));
    }

    /** {@code 2024-05-01T10:00:00Z}, fractions and offsets allowed. */
    public static Optional<Instant> parseRfc3339(String raw) {
      if (raw == null || raw.isBlank()) {
        return Optional.empty();
      }
      try {
        return Optional.of(OffsetDateTime.parse(raw.trim()).toInstant()); // ISO_OFFSET_DATE_TIME
      } catch (DateTimeParseException e) {
        return Optional.empty();
      }
    }

    /** What to do with the annotation; the ones with a phrase restore an earlier known start. */
    public enum Kind {
      /** A usable start, no later than any we knew. */
      KEEP(null),
      /** A new evacuation. */
      BEGIN(null),
      /** No start known and the annotation is unusable: replaced, with a warning. */
      MALFORMED(null),
      REMOVED("was removed"),
      MOVED_LATER("was moved later"),
      MADE_UNUSABLE("was made unusable");

      public final String phrase;

      Kind(String phrase) {
        this.phrase = phrase;
      }

      public boolean restores() {
        return phrase != null;
      }
    }

    /** {@code raw}: the annotation's unusable or later value, for the warning. */
    public record Decision(Kind kind, Instant start, String raw) {}

    /**
     * The deadline only ever moves earlier: a start removed, moved later or made malformed in the
     * middle of a drain is restored, never followed.
     *
     * @param earliestKnown the earliest start seen or written for this VMI's UID by this process
     * @param markSeen when this process first saw the VMI's current mark: a new evacuation starts
     *     then, not when a worker got to it
     */
    static Decision decide(
        String raw, Optional<Instant> earliestKnown, Optional<Instant> markSeen, Instant now) {
      Optional<Instant> valid = parse(raw, now, MAX_CLOCK_SKEW);
      if (earliestKnown.isEmpty()) {
        // Never later than now (a clock that stepped back must not push the start into the
        // future); second precision, as the annotation is written: what we remember equals what we
        // wrote.
        Instant begin =
            markSeen.filter(seen -> seen.isBefore(now)).orElse(now).truncatedTo(ChronoUnit.SECONDS);
        return valid.isPresent()
            ? new Decision(Kind.KEEP, valid.get(), null)
            : new Decision(raw == null ? Kind.BEGIN : Kind.MALFORMED, begin, raw);
      }
      Instant known = earliestKnown.get();
      if (valid.isPresent()) {
        // An earlier start shortens the deadline: that is always allowed.
        return valid.get().isAfter(known)
            ? new Decision(Kind.MOVED_LATER, known, format(valid.get()))
            : new Decision(Kind.KEEP, valid.get(), null);
      }
      return new Decision(raw == null ? Kind.REMOVED : Kind.MADE_UNUSABLE, known, raw);
    }
  }

  /**
   * An evacuation's deadline (start + drain timeout, or earlier the one CAPK's own controller
   * wrote: clusters migrating from CAPK keep their promise), when to look again, how long a pass
   * may last.
   */
  static final class EvacuationDeadline {
    private EvacuationDeadline() {}

    /** Requeue this much after the deadline so the clock has surely passed it. */
    static final Duration DEADLINE_MARGIN = Duration.ofMillis(200);

    static final Duration MIN_PASS = Duration.ofSeconds(1);

    /**
     * @param capkGraceTime the raw value of CAPK's {@code vmi-deletion-grace-time} annotation, if
     *     any; ignored when unparsable, and honoured only when earlier than start + timeout: a
     *     grace time far in the future must not lift the global timeout
     */
    static Deadline of(Instant start, Duration timeout, String capkGraceTime, Clock clock) {
      Instant ours = start.plus(timeout);
      Optional<Instant> capk = DrainStartTime.parseRfc3339(capkGraceTime);
      return Deadline.at(capk.isPresent() && capk.get().isBefore(ours) ? capk.get() : ours, clock);
    }

    /** True when CAPK's grace time, not start + timeout, set {@code deadline} (only earlier). */
    static boolean fromCapkGraceTime(Deadline deadline, Instant start, Duration timeout) {
      return deadline.at().isBefore(start.plus(timeout));
    }

    /** The wanted delay, never negative, never past the deadline plus {@link #DEADLINE_MARGIN}. */
    static Duration requeueDelay(Deadline deadline, Duration wanted) {
      Duration w = wanted.isNegative() ? Duration.ZERO : wanted;
      Duration untilDeadline = deadline.remaining().plus(DEADLINE_MARGIN);
      return w.compareTo(untilDeadline) < 0 ? w : untilDeadline;
    }

    /** The attempt timeout, cut to what is left before the deadline, at least {@link #MIN_PASS}. */
    static Duration passTimeout(Deadline deadline, Duration attemptTimeout) {
      Duration t = deadline.cap(attemptTimeout);
      return t.compareTo(MIN_PASS) < 0 ? MIN_PASS : t;
    }
  }

  /**
   * What to do about a guest node after an evacuation. Only a node carrying our cordon mark is ever
   * uncordoned; an admin's cordon has no mark and is left alone. Pure.
   */
  public enum UncordonDecision {
    /** No mark: not ours to touch. */
    NOT_OURS,
    /** Our mark, but the VMI is still evacuating or not back yet: look again later. */
    WAIT,
    /** Our mark, the VMI runs again (recreated, or its evacuation was called off), node Ready. */
    UNCORDON,
    /** Our mark, but someone already made the node schedulable: only remove the mark. */
    REMOVE_MARK;

    public static UncordonDecision of(V1Node node, VirtualMachineInstance vmi) {
      if (markOf(node) == null) {
        return NOT_OURS;
      }
      if (!Cordoner.unschedulable(node)) {
        return REMOVE_MARK;
      }
      boolean back =
          vmi != null
              && vmi.getMetadata() != null
              && vmi.getMetadata().getDeletionTimestamp() == null
              && vmi.getStatus() != null
              && !Eligibility.evacuationRequested(vmi)
              && VirtualMachineInstanceStatus.PHASE_RUNNING.equals(vmi.getStatus().getPhase());
      return back && NodeReadiness.of(node) == NodeReadiness.READY ? UNCORDON : WAIT;
    }

    /** The UID of the VMI we cordoned the node for, or null when we did not cordon it. */
    public static String markOf(V1Node node) {
      return LenientJson.annotation(node, EvictionAnnotations.CORDONED_BY);
    }
  }
}
