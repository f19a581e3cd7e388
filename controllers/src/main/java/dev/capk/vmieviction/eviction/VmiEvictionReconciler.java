package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus;
import dev.capk.vmieviction.eviction.EvictionMetrics.Outcome;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.extended.controller.reconciler.Reconciler;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.extended.workqueue.ratelimiter.ItemExponentialFailureRateLimiter;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evacuates VMIs with eviction strategy External: when KubeVirt sets {@code
 * status.evacuationNodeName}, drain the guest node running inside the VMI, then delete the VMI so
 * KubeVirt recreates it elsewhere; delete it anyway at the deadline. Level-triggered and
 * idempotent: all state that matters (drain start, our cordon) lives in the API, the in-memory
 * state only improves messages and spares guest calls.
 *
 * <p>The framework's {@code Result(true, delay)} requeues with {@code addAfter} and does not touch
 * the work queue's per-item failure counter, so the backoff after failures is kept here, where it
 * can be capped at the deadline.
 */
public final class VmiEvictionReconciler implements Reconciler {

  private static final Logger log = LoggerFactory.getLogger(VmiEvictionReconciler.class);

  static final Result DONE = new Result(false);
  /** How far in the future a recorded drain start may be before it counts as malformed. */
  static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(1);
  /** After a 409 (the object changed under us), look again almost at once. */
  static final Duration CONFLICT_RETRY = Duration.ofMillis(500);

  private final InfraVmis vmis;
  private final ClusterDefaults clusterDefaults;
  private final GuestConnector guests;
  private final VmiEvents events;
  private final EvictionMetrics metrics;
  private final EvictionSettings settings;
  private final Clock clock;

  private final ItemExponentialFailureRateLimiter<String> failures;
  /** Last known obstacle per VMI UID, named in the deadline warning. */
  private final Map<String, String> blockers = new ConcurrentHashMap<>();
  /** namespace/name to UID of the VMIs being evacuated, for the in-progress gauge and cleanup. */
  private final Map<String, String> inProgress = new ConcurrentHashMap<>();
  /** VMI UIDs whose guest node is known to carry no mark of ours: no guest call needed. */
  private final Cache<String, Boolean> noMark =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterWrite(6, TimeUnit.HOURS).build();
  /**
   * Per guest cluster, the nodes carrying our mark, read with one list and shared by the uncordon
   * checks of all its Running VMIs (after a restart: every VMI), instead of a node read per VMI.
   * Only this controller adds marks, and it forgets a cluster's entry whenever it changes a mark
   * there, so an entry is never missing a mark; it expires to notice marks removed by others.
   */
  private final Cache<String, MarkedNodes> markedByCluster =
      CacheBuilder.newBuilder().maximumSize(10_000).expireAfterWrite(30, TimeUnit.SECONDS).build();
  /** Per guest cluster, how often our marks there changed: a list that raced a change is not kept. */
  private final Map<String, AtomicLong> markChanges = new ConcurrentHashMap<>();
  /**
   * Per VMI ({@code namespace/name}), the earliest drain start seen or written for its UID: the
   * annotation can be rewritten by anyone, this record cannot, so the deadline only moves earlier.
   * After a restart the annotation is the record again.
   */
  private final Map<String, KnownStart> knownStarts = new ConcurrentHashMap<>();
  /** VMI UIDs already told that the fallback strategy leaves their evacuation to KubeVirt. */
  private final Cache<String, Boolean> toldLeftToKubeVirt =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  private record KnownStart(String uid, Instant start) {
    KnownStart earlier(KnownStart other) {
      if (!uid.equals(other.uid)) {
        return other; // a new VMI under the same name: its own evacuation
      }
      return other.start.isBefore(start) ? other : this;
    }
  }

  public VmiEvictionReconciler(
      InfraVmis vmis,
      ClusterDefaults clusterDefaults,
      GuestConnector guests,
      VmiEvents events,
      EvictionMetrics metrics,
      EvictionSettings settings,
      Clock clock) {
    this.vmis = vmis;
    this.clusterDefaults = clusterDefaults;
    this.guests = guests;
    this.events = events;
    this.metrics = metrics;
    this.settings = settings;
    this.clock = clock;
    this.failures =
        new ItemExponentialFailureRateLimiter<>(Duration.ofSeconds(1), settings.maxFailureBackoff());
  }

  @Override
  public Result reconcile(Request request) {
    String key = request.getNamespace() + "/" + request.getName();
    Optional<VirtualMachineInstance> found = vmis.get(request.getNamespace(), request.getName());
    if (found.isEmpty()) {
      // Deleted (by us or anyone): forget what we knew about it.
      failures.forget(key);
      knownStarts.remove(key);
      String uid = inProgress.remove(key);
      if (uid != null) {
        blockers.remove(uid);
        metrics.setInProgress(inProgress.size());
      }
      return DONE;
    }
    VirtualMachineInstance vmi = found.get();
    String vmiStrategy = vmi.getSpec() == null ? null : vmi.getSpec().getEvictionStrategy();
    Optional<String> clusterDefault = clusterDefaults.evictionStrategy();
    String strategy = EvictionStrategies.effective(vmiStrategy, clusterDefault, settings.fallbackStrategy());
    Eligibility eligibility = Eligibility.of(vmi, strategy);
    switch (eligibility) {
      case EVACUATE:
        return evacuate(key, vmi);
      case NOT_EVACUATING:
        return afterEvacuation(key, vmi);
      case NOT_EXTERNAL:
        if (strategy != null && !EvictionStrategies.isKnown(strategy) && Eligibility.evacuationRequested(vmi)) {
          // Left to KubeVirt, as for any non-External strategy; but an admin waiting for the drain of
          // the infra node must learn why this VMI is not being evacuated.
          String shown = strategy.length() > 64 ? strategy.substring(0, 64) + "..." : strategy;
          log.warn("unknown eviction strategy, not evacuating vmi={} strategy=\"{}\"", key, shown);
          events.warning(vmi, EventReasons.EVICTION_STRATEGY_UNKNOWN,
              "Eviction strategy \"" + shown + "\" is not one of " + String.join(", ", EvictionStrategies.KNOWN)
                  + ": not evacuating this VMI, it is left to KubeVirt");
        }
        if (EvictionStrategies.isFallback(vmiStrategy, clusterDefault) && Eligibility.evacuationRequested(vmi)) {
          tellLeftToKubeVirt(key, vmi, strategy);
        }
        forgetEvacuation(vmi);
        failures.forget(key);
        return DONE;
      case DELETING:
      default:
        knownStarts.remove(key);
        forgetEvacuation(vmi);
        failures.forget(key);
        return DONE;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Evacuation: start time, deadline, guest drain, delete.

  private Result evacuate(String key, VirtualMachineInstance vmi) {
    Instant now = clock.instant();
    String uid = vmi.getMetadata().getUid();
    Map<String, String> annotations = vmi.getMetadata().getAnnotations();
    String recorded = annotations == null ? null : annotations.get(EvictionAnnotations.DRAIN_START_TIME);
    String capkGrace =
        annotations == null ? null : annotations.get(EvictionAnnotations.CAPK_DELETION_GRACE_TIME);
    DrainStartDecision decision =
        DrainStartDecision.decide(
            DrainStartTime.parse(recorded, now, MAX_CLOCK_SKEW), knownStart(key, uid), now);
    Instant start = decision.start();
    if (!(decision instanceof DrainStartDecision.Keep)) {
      try {
        vmi = vmis.annotate(vmi, EvictionAnnotations.DRAIN_START_TIME, DrainStartTime.format(start));
      } catch (ApiException e) {
        // A 409 here is usually our own stale cache (the write before this one not seen yet): look
        // again at once. A known start keeps its deadline while the annotation cannot be fixed.
        return infraFailure(key, vmi, "recording the drain start", e,
            decision instanceof DrainStartDecision.Restore ? EvacuationDeadline.of(start, settings.drainTimeout(), capkGrace, clock) : null);
      }
    }
    knownStarts.merge(key, new KnownStart(uid, start), KnownStart::earlier);
    Deadline deadline = EvacuationDeadline.of(start, settings.drainTimeout(), capkGrace, clock);
    if (decision instanceof DrainStartDecision.Restore restore) {
      String was = restore.raw() == null ? "" : " (to \"" + shorten(restore.raw()) + "\")";
      log.warn("drain start annotation {} mid-drain, restored vmi={} start={} deadline={}",
          restore.tampering().phrase, key, DrainStartTime.format(start), DrainStartTime.format(deadline.at()));
      events.warning(vmi, EventReasons.DRAIN_START_TIME_RESTORED,
          "Annotation " + EvictionAnnotations.DRAIN_START_TIME + " " + restore.tampering().phrase + was
              + " during the drain; restored to the earliest start " + DrainStartTime.format(start)
              + ": the deadline " + DrainStartTime.format(deadline.at()) + " never moves later");
    }
    if (decision instanceof DrainStartDecision.ReplaceMalformed malformed) {
      String shown = shorten(malformed.raw());
      log.warn("drain start annotation malformed, replaced vmi={} value=\"{}\" start={}", key, shown, DrainStartTime.format(start));
      events.warning(
          vmi,
          EventReasons.DRAIN_START_TIME_INVALID,
          "Annotation " + EvictionAnnotations.DRAIN_START_TIME + " value \"" + shown
              + "\" is not an RFC 3339 time in the past; drain start reset to " + DrainStartTime.format(start));
    }
    if (decision instanceof DrainStartDecision.Begin || decision instanceof DrainStartDecision.ReplaceMalformed) {
      metrics.evacuationStarted();
      log.info(
          "evacuation started vmi={} infraNode={} start={} deadline={}",
          key, Eligibility.evacuationNodeName(vmi), DrainStartTime.format(start), DrainStartTime.format(deadline.at()));
      events.normal(
          vmi,
          EventReasons.DRAIN_STARTED,
          "Infra node " + Eligibility.evacuationNodeName(vmi) + " is being drained: draining the guest node, "
              + "then deleting this VMI; deadline " + DrainStartTime.format(deadline.at()));
    }
    inProgress.put(key, uid);
    metrics.setInProgress(inProgress.size());

    // The deadline is checked before anything touches the guest cluster.
    if (deadline.passed()) {
      return deadlineReached(key, vmi, start, deadline);
    }

    Guest guest;
    try {
      // From here on no guest request may run past the deadline.
      guest = guests.connect(vmi, Optional.of(deadline.remaining()));
    } catch (GuestAccessException e) {
      return guestFailure(key, vmi, deadline, e.reason().name(), e.getMessage(), true);
    }
    // Cordoning marks the node for this UID: from now on the uncordon check must look again.
    noMark.invalidate(uid);
    String vmiName = vmi.getMetadata().getName();
    try {
      Optional<V1Node> found = guest.findNode(vmiName);
      if (found.isEmpty()) {
        String msg =
            "No guest node named " + vmiName + " or with providerID " + GuestNodeMatch.providerIdFor(vmiName)
                + " in cluster " + guest.cluster() + ": nothing to drain";
        log.info("guest node not found vmi={} cluster={}", key, guest.cluster());
        events.normal(vmi, EventReasons.GUEST_NODE_NOT_FOUND, msg);
        return delete(key, vmi, start, Outcome.NODE_MISSING);
      }
      V1Node node = found.get();
      String nodeName = node.getMetadata().getName();
      boolean unschedulable =
          node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
      if (!unschedulable) {
        changingMarks(guest, () -> guest.cordonAndMark(node, uid));
        log.info("guest node cordoned vmi={} cluster={} node={}", key, guest.cluster(), nodeName);
        events.normal(vmi, EventReasons.CORDONED, "Cordoned guest node " + nodeName + " in cluster " + guest.cluster());
        guest.nodeEvent(node, false, EventReasons.CORDONED,
            "Cordoned: infra VMI " + key + " is being evacuated from node " + Eligibility.evacuationNodeName(vmi));
      }
      boolean unreachable = NodeReadiness.of(node) == NodeReadiness.UNREACHABLE;
      Duration passTimeout = EvacuationDeadline.passTimeout(deadline, settings.attemptTimeout());
      Instant passStart = clock.instant();
      DrainPass pass = guest.drain(nodeName, passTimeout, unreachable);
      metrics.drainPass(Duration.between(passStart, clock.instant()));
      metrics.evictions(EvictionMetrics.EvictionResult.EVICTED, pass.evicted());
      metrics.evictions(EvictionMetrics.EvictionResult.BLOCKED_BY_BUDGET, pass.blockingBudgets().size());
      metrics.evictions(EvictionMetrics.EvictionResult.ERROR, pass.failures().size());
      failures.forget(key);
      if (pass.refused()) {
        blockers.put(uid, pass.pending() + " pod(s) left: " + pass.blockers());
        log.warn("drain refused vmi={} cluster={} node={} refusals={}", key, guest.cluster(), nodeName, pass.refusals());
        events.warning(vmi, EventReasons.DRAIN_REFUSED,
            "Drain of guest node " + nodeName + " refused: " + String.join("; ", pass.refusals()));
        return requeue(deadline, settings.retryInterval());
      }
      if (pass.complete()) {
        log.info("guest node drained vmi={} cluster={} node={} summary=\"{}\"", key, guest.cluster(), nodeName, pass.summary());
        events.normal(vmi, EventReasons.DRAIN_SUCCEEDED, "Guest node " + nodeName + " drained: " + pass.summary());
        guest.nodeEvent(node, false, EventReasons.DRAIN_SUCCEEDED, "Drained for the evacuation of infra VMI " + key);
        return delete(key, vmi, start, Outcome.DRAINED);
      }
      blockers.put(uid, pass.pending() + " pod(s) left: " + pass.blockers());
      log.info(
          "guest node not drained yet vmi={} cluster={} node={} pending={} blockers=\"{}\" deadline={}",
          key, guest.cluster(), nodeName, pass.pending(), pass.blockers(), DrainStartTime.format(deadline.at()));
      events.warning(vmi, EventReasons.DRAIN_BLOCKED,
          "Guest node " + nodeName + " not drained yet (" + pass.pending() + " pod(s) left): " + pass.blockers()
              + "; VMI deleted anyway at " + DrainStartTime.format(deadline.at()));
      if (!pass.blockingBudgets().isEmpty()) {
        guest.nodeEvent(node, true, EventReasons.DRAIN_BLOCKED, "Drain blocked: " + pass.blockers());
      }
      return requeue(deadline, settings.retryInterval());
    } catch (GuestAccessException e) {
      return guestFailure(key, vmi, deadline, e.reason().name(), e.getMessage(), true);
    } catch (ApiException e) {
      if (e.getCode() == 409) {
        log.info("guest node changed while cordoning, retrying vmi={} cluster={}", key, guest.cluster());
        return requeue(deadline, CONFLICT_RETRY);
      }
      return guestFailure(key, vmi, deadline, GuestAccessException.Reason.GuestAPIError.name(),
          "guest cluster " + guest.cluster() + ": request failed: "
              + ApiStatus.describeWithoutServerText(e), true);
    } catch (RuntimeException e) {
      // A bug or an unexpected answer: still capped at the deadline, never a hot loop.
      log.error("unexpected failure vmi={} cluster={} error={}", key, guest.cluster(), e.getClass().getName(), e);
      return guestFailure(key, vmi, deadline, EventReasons.RECONCILE_ERROR,
          "unexpected " + e.getClass().getSimpleName() + " while draining (see controller log)", true);
    }
  }

  private Result deadlineReached(String key, VirtualMachineInstance vmi, Instant start, Deadline deadline) {
    String uid = vmi.getMetadata().getUid();
    String blocking = blockers.getOrDefault(uid, "unknown (no drain pass seen by this controller instance)");
    String origin =
        EvacuationDeadline.fromCapkGraceTime(deadline, start, settings.drainTimeout())
            ? "annotation " + EvictionAnnotations.CAPK_DELETION_GRACE_TIME
            : "drain timeout " + GoDuration.format(settings.drainTimeout()) + " from start " + DrainStartTime.format(start);
    log.warn("drain deadline passed, deleting vmi={} deadline={} origin=\"{}\" blockers=\"{}\"",
        key, DrainStartTime.format(deadline.at()), origin, blocking);
    events.warning(vmi, EventReasons.DEADLINE_PASSED,
        "Guest node not drained by " + DrainStartTime.format(deadline.at()) + " (" + origin
            + "); deleting the VMI anyway. Still blocking: " + blocking);
    return delete(key, vmi, start, Outcome.DEADLINE);
  }

  private Result delete(String key, VirtualMachineInstance vmi, Instant start, Outcome outcome) {
    InfraVmis.DeleteOutcome result;
    try {
      result = vmis.deleteExact(vmi);
    } catch (ApiException e) {
      metrics.reconcileError(EventReasons.INFRA_API_ERROR);
      // The infra API server's own message says what was refused (verb, resource, user); it holds no
      // credentials, unlike a guest kubeconfig.
      String msg = "deleting the VMI failed: " + ApiStatus.describe(e);
      log.warn("vmi delete failed vmi={} code={} error=\"{}\"", key, e.getCode(), ApiStatus.describe(e));
      events.warning(vmi, EventReasons.INFRA_API_ERROR, msg);
      // Past the deadline there is nothing to cap at: plain backoff, bounded.
      return new Result(true, failures.when(key));
    }
    failures.forget(key);
    knownStarts.remove(key);
    String uid = vmi.getMetadata().getUid();
    switch (result) {
      case DELETED -> {
        log.info("vmi deleted vmi={} uid={} outcome={}", key, uid, outcome.label);
        events.normal(vmi, EventReasons.VMI_DELETED,
            "Deleted (" + outcome.label + ") so that KubeVirt recreates it on another node");
        metrics.evacuationEnded(outcome, Duration.between(start, clock.instant()));
      }
      case REPLACED -> log.info("vmi replaced before delete, nothing to do vmi={} uid={}", key, uid);
      case GONE -> log.info("vmi already gone vmi={} uid={}", key, uid);
    }
    forgetEvacuation(vmi);
    return DONE;
  }

  // ---------------------------------------------------------------------------------------------
  // After an evacuation: uncordon the guest node we cordoned, once the VMI runs again.

  private Result afterEvacuation(String key, VirtualMachineInstance vmi) {
    String uid = vmi.getMetadata().getUid();
    forgetEvacuation(vmi);
    knownStarts.remove(key);
    Map<String, String> annotations = vmi.getMetadata().getAnnotations();
    if (annotations != null && annotations.containsKey(EvictionAnnotations.DRAIN_START_TIME)) {
      // The evacuation was called off (KubeVirt cleared evacuationNodeName): a later one must get
      // a fresh start and deadline, not this stale one.
      try {
        vmi = vmis.annotate(vmi, EvictionAnnotations.DRAIN_START_TIME, null);
        log.info("evacuation called off, drain start cleared vmi={}", key);
      } catch (ApiException e) {
        return infraFailure(key, vmi, "clearing the drain start", e);
      }
    }
    if (vmi.getStatus() == null
        || !VirtualMachineInstanceStatus.PHASE_RUNNING.equals(vmi.getStatus().getPhase())) {
      return DONE; // an update will come when it runs
    }
    if (noMark.getIfPresent(uid) != null) {
      return DONE;
    }
    Guest guest;
    try {
      guest = guests.connect(vmi, Optional.empty());
    } catch (GuestAccessException e) {
      switch (e.reason()) {
        case MissingClusterLabel, ClusterNamespaceRefused, ClusterNotFound, KubeconfigSecretNotFound -> {
          // No guest cluster to go to: nothing of ours can be there. Not an error for this VMI.
          noMark.put(uid, Boolean.TRUE);
          return DONE;
        }
        default -> {
          log.info("uncordon check postponed vmi={} reason={} detail=\"{}\"", key, e.reason(), e.getMessage());
          return new Result(true, failures.when(key));
        }
      }
    }
    try {
      if (!markedNodes(guest).mayHoldNodeOf(vmi.getMetadata().getName())) {
        noMark.put(uid, Boolean.TRUE);
        failures.forget(key);
        return DONE;
      }
      Optional<V1Node> found = guest.findNode(vmi.getMetadata().getName());
      if (found.isEmpty()) {
        noMark.put(uid, Boolean.TRUE);
        failures.forget(key);
        return DONE;
      }
      V1Node node = found.get();
      String nodeName = node.getMetadata().getName();
      switch (UncordonDecision.of(node, vmi)) {
        case NOT_OURS -> {
          noMark.put(uid, Boolean.TRUE);
          failures.forget(key);
          return DONE;
        }
        case REMOVE_MARK -> {
          changingMarks(guest, () -> guest.removeMark(node));
          log.info("guest node already schedulable, mark removed vmi={} cluster={} node={}", key, guest.cluster(), nodeName);
          noMark.put(uid, Boolean.TRUE);
          failures.forget(key);
          return DONE;
        }
        case WAIT -> {
          log.debug("guest node not ready for uncordon yet vmi={} node={}", key, nodeName);
          return new Result(true, settings.retryInterval());
        }
        case UNCORDON -> {
          changingMarks(guest, () -> guest.uncordonAndUnmark(node));
          log.info("guest node uncordoned vmi={} cluster={} node={}", key, guest.cluster(), nodeName);
          events.normal(vmi, EventReasons.UNCORDONED,
              "Uncordoned guest node " + nodeName + " in cluster " + guest.cluster() + ": the VMI runs again");
          guest.nodeEvent(node, false, EventReasons.UNCORDONED, "Uncordoned: infra VMI " + key + " runs again");
          noMark.put(uid, Boolean.TRUE);
          failures.forget(key);
          return DONE;
        }
        default -> {
          return DONE;
        }
      }
    } catch (GuestAccessException e) {
      log.info("uncordon check postponed vmi={} reason={} detail=\"{}\"", key, e.reason(), e.getMessage());
      return new Result(true, failures.when(key));
    } catch (ApiException e) {
      log.info("uncordon check postponed vmi={} code={}", key, e.getCode());
      return new Result(true, e.getCode() == 409 ? CONFLICT_RETRY : failures.when(key));
    }
  }

  private MarkedNodes markedNodes(Guest guest) throws GuestAccessException, ApiException {
    MarkedNodes known = markedByCluster.getIfPresent(guest.cluster());
    if (known == null) {
      AtomicLong changes = markChanges.computeIfAbsent(guest.cluster(), c -> new AtomicLong());
      long before = changes.get();
      known = guest.markedNodes();
      if (changes.get() == before) {
        markedByCluster.put(guest.cluster(), known);
      }
    }
    return known;
  }

  private interface MarkChange {
    void run() throws GuestAccessException, ApiException;
  }

  /** Runs a patch that adds or removes our mark; lists of the cluster's marks taken meanwhile are not kept. */
  private void changingMarks(Guest guest, MarkChange change) throws GuestAccessException, ApiException {
    AtomicLong changes = markChanges.computeIfAbsent(guest.cluster(), c -> new AtomicLong());
    changes.incrementAndGet();
    markedByCluster.invalidate(guest.cluster());
    try {
      change.run();
    } finally {
      changes.incrementAndGet();
      markedByCluster.invalidate(guest.cluster());
    }
  }

  // ---------------------------------------------------------------------------------------------

  private Result guestFailure(
      String key, VirtualMachineInstance vmi, Deadline deadline, String reason, String message, boolean event) {
    metrics.reconcileError(reason);
    blockers.put(vmi.getMetadata().getUid(), message);
    Duration delay = EvacuationDeadline.requeueDelay(deadline, failures.when(key));
    log.warn("evacuation step failed vmi={} reason={} detail=\"{}\" retryIn={} deadline={}",
        key, reason, message, delay, DrainStartTime.format(deadline.at()));
    if (event) {
      events.warning(vmi, reason, message + "; retrying, VMI deleted anyway at " + DrainStartTime.format(deadline.at()));
    }
    return new Result(true, delay);
  }

  private Result infraFailure(String key, VirtualMachineInstance vmi, String what, ApiException e) {
    return infraFailure(key, vmi, what, e, null);
  }

  /** As above; with a known deadline, the retry never comes later than it. */
  private Result infraFailure(
      String key, VirtualMachineInstance vmi, String what, ApiException e, Deadline deadline) {
    if (e.getCode() == 404) {
      return DONE; // the VMI is gone
    }
    if (e.getCode() == 409) {
      return new Result(true, CONFLICT_RETRY); // our cache was stale: read again
    }
    metrics.reconcileError(EventReasons.INFRA_API_ERROR);
    log.warn("infra API call failed vmi={} step=\"{}\" code={} error=\"{}\"", key, what, e.getCode(), ApiStatus.describe(e));
    events.warning(vmi, EventReasons.INFRA_API_ERROR, what + " failed: " + ApiStatus.describe(e));
    // Without a recorded start there is no deadline yet: plain bounded backoff.
    Duration delay = failures.when(key);
    return new Result(true, deadline == null ? delay : EvacuationDeadline.requeueDelay(deadline, delay));
  }

  /**
   * A VMI marked for evacuation whose strategy is only the operator's fallback (neither the VMI nor
   * the KubeVirt CR sets one) is left to KubeVirt; the admin draining the infra node learns why, once
   * per VMI, and how to opt in.
   */
  private void tellLeftToKubeVirt(String key, VirtualMachineInstance vmi, String strategy) {
    String uid = vmi.getMetadata().getUid();
    if (uid == null || toldLeftToKubeVirt.asMap().putIfAbsent(uid, Boolean.TRUE) != null) {
      return;
    }
    log.info("evacuation left to KubeVirt, no eviction strategy set vmi={} fallback={}", key, strategy);
    events.normal(vmi, EventReasons.EVACUATION_LEFT_TO_KUBEVIRT,
        "Infra node " + Eligibility.evacuationNodeName(vmi) + " is being drained, but neither this VMI nor the"
            + " KubeVirt CR sets an evictionStrategy, so the controller's fallback (--default-eviction-strategy="
            + strategy + ") applies and KubeVirt handles this VMI itself. To have its guest node drained first, set"
            + " evictionStrategy: External on the VMI (CAPK's VM template) or in the KubeVirt CR.");
  }

  private static String shorten(String raw) {
    return raw.length() > 64 ? raw.substring(0, 64) + "..." : raw;
  }

  private Optional<Instant> knownStart(String key, String uid) {
    KnownStart known = knownStarts.get(key);
    return known != null && known.uid().equals(uid) ? Optional.of(known.start()) : Optional.empty();
  }

  private Result requeue(Deadline deadline, Duration wanted) {
    return new Result(true, EvacuationDeadline.requeueDelay(deadline, wanted));
  }

  private void forgetEvacuation(VirtualMachineInstance vmi) {
    if (vmi.getMetadata() == null) {
      return;
    }
    String uid = vmi.getMetadata().getUid();
    if (uid != null) {
      blockers.remove(uid);
    }
    String key = vmi.getMetadata().getNamespace() + "/" + vmi.getMetadata().getName();
    if (inProgress.remove(key) != null) {
      metrics.setInProgress(inProgress.size());
    }
  }
}
