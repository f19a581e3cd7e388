package dev.capk.vmieviction.maintenance;

import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.PHASE_FAILED;
import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.PHASE_RUNNING;
import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.PHASE_SUCCEEDED;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceStatus;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RequestRefused;
import dev.capk.vmieviction.logging.WaitLog;
import dev.capk.vmieviction.time.GoDuration;
import io.kubernetes.client.extended.controller.reconciler.Reconciler;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.extended.workqueue.ratelimiter.ItemExponentialFailureRateLimiter;
import io.kubernetes.client.openapi.ApiException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Puts nodes into maintenance as NodeMaintenance objects ask, the way the Node Maintenance Operator
 * does: validate (the node exists, no other maintenance owns it) before changing anything; add the
 * finalizer; taint and cordon the node, recording on it what was changed; drain it with the drain
 * engine one short step per reconcile (the evictions that are due, then return: pods leaving the
 * node wake the next step, refused evictions their own due time), writing progress to the status as
 * pods go; phase Succeeded when no evictable pod is left. On deletion: remove exactly the taints it
 * added, uncordon only a node it cordoned, drop the finalizer.
 *
 * <p>Level-triggered and restart-safe: what was changed lives on the node (written in the same
 * patch as the change) and the progress counts live in the status; what is kept in memory (the
 * failure backoff, each pod's eviction retry schedule) only paces retries.
 */
public final class NodeMaintenanceReconciler implements Reconciler {
  private static final Logger log = LoggerFactory.getLogger(NodeMaintenanceReconciler.class);

  static final Result DONE = new Result(false);

  /** After a 409 (the object changed under us), look again almost at once. */
  static final Duration CONFLICT_RETRY = Duration.ofMillis(500);

  private final Function<String, NodeMaintenance> cache;
  private final MaintenanceCluster cluster;
  private final NodeDrainSteps drains;
  private final MaintenanceEvents events;
  private final NodeMaintenanceSettings settings;
  private final Clock clock;
  private final ItemExponentialFailureRateLimiter<String> failures;

  /** Conflicts in a row per maintenance, read again at once up to {@link #MAX_QUICK_CONFLICTS}. */
  private final Map<String, Integer> conflicts = new ConcurrentHashMap<>();

  static final int MAX_QUICK_CONFLICTS = 3;

  /** The drain refusals told, by NodeMaintenance UID. */
  private final WaitLog waits = new WaitLog();

  /**
   * @param cache the NodeMaintenance by name from the informer, or null
   */
  public NodeMaintenanceReconciler(
      Function<String, NodeMaintenance> cache,
      MaintenanceCluster cluster,
      NodeDrainSteps drains,
      MaintenanceEvents events,
      NodeMaintenanceSettings settings,
      Clock clock) {
    this.cache = cache;
    this.cluster = cluster;
    this.drains = drains;
    this.events = events;
    this.settings = settings;
    this.clock = clock;
    this.failures =
        new ItemExponentialFailureRateLimiter<>(Duration.ofSeconds(1), settings.maxBackoff());
  }

  @Override
  public Result reconcile(Request request) {
    String name = request.getName();
    NodeMaintenance nm = cache.apply(name);
    if (nm == null) {
      drains.endNamed(name);
      succeeded(name);
      return DONE;
    }
    try {
      if (nm.getMetadata().getDeletionTimestamp() != null) {
        return end(nm);
      }
      if (!Admission.accepted(nm)) {
        if (Admission.inert(nm)) {
          return DONE;
        }
        Optional<NodeMaintenance> admitted = admit(nm);
        if (admitted.isEmpty()) {
          return DONE;
        }
      }
      // The cache can lag behind our own status writes (a node event may arrive before our last
      // Succeeded patch does): counts and phase read from it could overwrite what is already
      // recorded. Maintenance decides on the object as the API server has it now.
      Optional<NodeMaintenance> live = cluster.readMaintenance(name);
      if (live.isEmpty()) {
        drains.endNamed(name);
        succeeded(name);
        return DONE;
      }
      nm = live.get();
      if (nm.getMetadata().getDeletionTimestamp() != null) {
        return end(nm);
      }
      if (!Admission.accepted(nm)) {
        // Replaced by a new object of the same name: its own watch event brings it here.
        return DONE;
      }
      return maintain(nm, nm.phase());
    } catch (RequestRefused e) {
      // Asking again will not help until someone lifts what refused it: say so, and back off.
      events.onMaintenance(nm, true, MaintenanceEventReasons.REQUEST_REFUSED, e.getMessage());
      return failure(nm, e.getMessage());
    } catch (ApiException e) {
      if (e.getCode() == 409) {
        int inARow = conflicts.merge(name, 1, Integer::sum);
        if (inARow <= MAX_QUICK_CONFLICTS) {
          log.debug("conflict, retrying nodeMaintenance={} error=\"{}\"", name, e.getMessage());
          return new Result(true, CONFLICT_RETRY);
        }
        String msg = "the node or maintenance changed " + inARow + " times in a row; backing off";
        events.onMaintenance(nm, true, MaintenanceEventReasons.REQUEST_REFUSED, msg);
        return failure(nm, msg);
      }
      return failure(nm, "API request failed: " + ApiStatus.describe(e));
    } catch (RuntimeException e) {
      log.error("unexpected failure nodeMaintenance={}", name, e);
      return failure(nm, "unexpected " + e.getClass().getSimpleName() + " (see controller log)");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Admission: nothing changes before the maintenance is known to be valid and the node's only one.

  /** The accepted maintenance (with our finalizer), or empty when refused or gone. */
  private Optional<NodeMaintenance> admit(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    String node = nm.nodeName();
    if (node == null || node.isBlank()) {
      refuse(
          nm, MaintenanceEventReasons.NODE_NOT_FOUND, "invalid nodeName: spec.nodeName is empty");
      return Optional.empty();
    }
    // The API server's list, not the cache: a maintenance accepted (or refused) a moment ago must
    // be seen as such, and the cache may lag behind our own writes.
    List<NodeMaintenance> all = cluster.listMaintenances();
    String uid = nm.getMetadata().getUid();
    Optional<NodeMaintenance> live =
        all.stream().filter(o -> uid.equals(o.getMetadata().getUid())).findFirst();
    if (live.isEmpty() || live.get().getMetadata().getDeletionTimestamp() != null) {
      return Optional.empty();
    }
    if (Admission.accepted(live.get())) {
      return live;
    }
    if (Admission.inert(live.get())) {
      return Optional.empty();
    }
    if (cluster.readNode(node).isEmpty()) {
      refuse(
          nm,
          MaintenanceEventReasons.NODE_NOT_FOUND,
          "invalid nodeName, no node with name "
              + node
              + " found; nothing was changed: delete this NodeMaintenance and create one for an existing node");
      return Optional.empty();
    }
    Optional<NodeMaintenance> first = Admission.precedence(live.get(), all);
    if (first.isPresent()) {
      NodeMaintenance owner = first.get();
      refuse(
          nm,
          MaintenanceEventReasons.DUPLICATE_MAINTENANCE,
          "invalid nodeName, a NodeMaintenance for node "
              + node
              + " already exists: "
              + owner.getMetadata().getName()
              + (owner.getMetadata().getCreationTimestamp() == null
                  ? ""
                  : " (created "
                      + StatusPatch.rfc3339(owner.getMetadata().getCreationTimestamp().toInstant())
                      + ")")
              + "; this one changed nothing: delete it");
      return Optional.empty();
    }
    if (!cluster.addFinalizer(name)) {
      return Optional.empty();
    }
    log.info(
        "maintenance accepted nodeMaintenance={} node={} reason=\"{}\"", name, node, reason(nm));
    events.onMaintenance(
        nm,
        false,
        MaintenanceEventReasons.BEGIN_MAINTENANCE,
        "Begin a node maintenance of node "
            + node
            + (reason(nm).isEmpty() ? "" : ": " + reason(nm)));
    cluster.patchStatus(
        name,
        StatusPatch.of().phase(PHASE_RUNNING).lastError(null).lastUpdate(clock.instant()).toJson());
    return live;
  }

  private void refuse(NodeMaintenance nm, String reason, String message) throws ApiException {
    String name = nm.getMetadata().getName();
    log.warn(
        "maintenance refused nodeMaintenance={} node={} reason={} message=\"{}\"",
        name,
        nm.nodeName(),
        reason,
        message);
    cluster.patchStatus(
        name,
        StatusPatch.of()
            .phase(PHASE_FAILED)
            .lastError(message)
            .lastUpdate(clock.instant())
            .toJson());
    events.onMaintenance(nm, true, reason, message);
  }

  // ---------------------------------------------------------------------------------------------
  // Maintenance: taint, cordon, drain in short steps.

  /** One maintenance step as it began: the object, its phase and status, and the node. */
  private record Pass(
      NodeMaintenance nm, String phase, NodeMaintenanceStatus status, NodeView view) {
    String name() {
      return nm.getMetadata().getName();
    }

    String node() {
      return nm.nodeName();
    }
  }

  /**
   * @param phase the phase when this reconcile began
   */
  private Result maintain(NodeMaintenance nm, String phase) throws ApiException {
    String name = nm.getMetadata().getName();
    String uid = nm.getMetadata().getUid();
    String node = nm.nodeName();
    Optional<NodeView> found = cluster.readNode(node);
    if (found.isEmpty()) {
      return nodeGone(nm);
    }
    NodeView view = found.get();
    if (!PHASE_RUNNING.equals(phase) && !PHASE_SUCCEEDED.equals(phase)) {
      // First look after acceptance by an older release, or the node is back after it was gone.
      cluster.patchStatus(
          name,
          StatusPatch.of()
              .phase(PHASE_RUNNING)
              .lastError(null)
              .lastUpdate(clock.instant())
              .toJson());
    }
    enter(nm, view);

    NodeMaintenanceStatus status =
        nm.getStatus() == null ? new NodeMaintenanceStatus() : nm.getStatus();
    DrainProgress progress =
        new DrainProgress(orZero(status.getEvictionPods()), orZero(status.getTotalpods()));
    Optional<DrainStep> stepped = drainStep(nm);
    if (stepped.isEmpty()) {
      return backoff(name);
    }
    DrainStep step = stepped.get();
    progress.stepped(step);
    DrainProgress.Snapshot s = progress.snapshot();
    Pass pass = new Pass(nm, phase, status, view);
    if (step.complete()) {
      // Drained: nothing more to watch. A resync (or a node event) looks again with a fresh drain.
      drains.end(uid);
      drained(pass, step, s);
      return DONE;
    }
    notDrainedYet(pass, step, s);
    succeeded(name);
    return new Result(true, nextStep(step));
  }

  /** Taints and cordons the node, where it is not yet. */
  private void enter(NodeMaintenance nm, NodeView view) throws ApiException {
    String name = nm.getMetadata().getName();
    String node = nm.nodeName();
    Optional<NodePatches.Entering> entering =
        NodePatches.enter(view, settings.taints(), name, nm.getMetadata().getUid());
    if (entering.isEmpty()) {
      return;
    }
    NodePatches.Entering e = entering.get();
    patchNode(node, e.patch(), "tainting and cordoning node");
    log.info(
        "node tainted and cordoned nodeMaintenance={} node={} taintsAdded={} cordoned={}",
        name,
        node,
        e.taintsAdded(),
        e.cordonedNow());
    if (!e.taintsAdded().isEmpty() || e.cordonedNow()) {
      String msg = describeEntering(name, e, view);
      events.onNode(node, view.uid(), false, MaintenanceEventReasons.CORDON_NODE, msg);
      events.onMaintenance(nm, false, MaintenanceEventReasons.CORDON_NODE, msg);
    }
  }

  /** The drain's next step; empty when the drain was refused (told: back off). */
  private Optional<DrainStep> drainStep(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    String uid = nm.getMetadata().getUid();
    String node = nm.nodeName();
    try {
      DrainOptions options =
          DrainOptions.builder()
              // The Node Maintenance Operator's drain: pods without a controller (VM pods) and
              // emptyDir data go; DaemonSet pods stay (virt-handler must keep running).
              .force(true)
              .ignoreAllDaemonSets(true)
              .deleteEmptyDirData(true)
              // Bounds the step's eviction requests; the step itself never waits for pods.
              .timeout(passTimeout(nm, settings))
              .build();
      return Optional.of(drains.step(uid, name, node, options));
    } catch (DrainRefusedException refused) {
      // Retried with backoff while it lasts: told once per refusal, the status and events keep it.
      log.atLevel(waits.changed(uid, refused.getMessage()) ? Level.WARN : Level.DEBUG)
          .log(
              "drain refused nodeMaintenance={} node={} error=\"{}\"",
              name,
              node,
              refused.getMessage());
      cluster.patchStatus(
          name,
          StatusPatch.of()
              .phase(PHASE_RUNNING)
              .lastError(refused.getMessage())
              .lastUpdate(clock.instant())
              .toJson());
      events.onMaintenance(nm, true, MaintenanceEventReasons.DRAIN_REFUSED, refused.getMessage());
      return Optional.empty();
    }
  }

  /** The node is drained: the status says so, and the events once. */
  private void drained(Pass p, DrainStep step, DrainProgress.Snapshot s) throws ApiException {
    String name = p.name();
    String node = p.node();
    if (!alreadySucceeded(p.phase(), p.status(), s)) {
      cluster.patchStatus(
          name,
          StatusPatch.of()
              .phase(PHASE_SUCCEEDED)
              .progress(s)
              .drainProgress(100)
              .pendingPods(List.of())
              .lastError(null)
              .lastUpdate(clock.instant())
              .toJson());
    }
    succeeded(name);
    if (PHASE_SUCCEEDED.equals(p.phase())) {
      return;
    }
    log.info(
        "maintenance succeeded nodeMaintenance={} node={} summary=\"{}\"",
        name,
        node,
        step.summary());
    events.onMaintenance(
        p.nm(),
        false,
        MaintenanceEventReasons.SUCCEED_MAINTENANCE,
        "Node maintenance was succeeded: node "
            + node
            + " is cordoned and drained ("
            + step.evicted()
            + " pod(s) evicted, "
            + step.skipped().size()
            + " left in place)");
    events.onNode(
        node,
        p.view().uid(),
        false,
        MaintenanceEventReasons.SUCCEED_MAINTENANCE,
        "Node is in maintenance (NodeMaintenance " + name + "): cordoned and drained");
  }

  /** Not drained yet: the progress written when it changed, a refused eviction told. */
  private void notDrainedYet(Pass p, DrainStep step, DrainProgress.Snapshot s) throws ApiException {
    // Steps come often (each pod that leaves wakes one): write only what changed.
    if (!PHASE_RUNNING.equals(p.phase()) || !shows(p.status(), s)) {
      cluster.patchStatus(
          p.name(),
          StatusPatch.of()
              .phase(PHASE_RUNNING)
              .progress(s)
              .lastError(s.lastError())
              .lastUpdate(clock.instant())
              .toJson());
      log.info(
          "node not drained yet nodeMaintenance={} node={} pending={} terminating={} progress={}%"
              + " lastError=\"{}\"",
          p.name(),
          p.node(),
          s.pendingPods().size(),
          step.terminating().size(),
          s.percent(),
          s.lastError());
    }
    if (DrainProgress.held(step) && step.requests() > 0) {
      // An eviction was refused (or failed) just now: one event per refused attempt.
      events.onMaintenance(
          p.nm(),
          true,
          MaintenanceEventReasons.DRAIN_BLOCKED,
          "Node " + p.node() + " not drained yet, retrying: " + s.lastError());
    }
  }

  /**
   * When to come back: when the earliest waiting pod is due again; without one (only deletions are
   * awaited), after the longest retry wait, as a fallback to the watch that wakes the maintenance
   * when pods leave.
   */
  Duration nextStep(DrainStep step) {
    Duration fallback = settings.maxRetryInterval();
    if (step.nextTry().isEmpty()) {
      return fallback;
    }
    Duration d = Duration.between(clock.instant(), step.nextTry().get());
    if (d.isNegative()) {
      return Duration.ZERO;
    }
    return d.compareTo(fallback) > 0 ? fallback : d;
  }

  /** The status already shows this progress: nothing to write. */
  static boolean shows(NodeMaintenanceStatus status, DrainProgress.Snapshot s) {
    List<String> pending = status.getPendingPods() == null ? List.of() : status.getPendingPods();
    return Integer.valueOf(s.percent()).equals(status.getDrainProgress())
        && Integer.valueOf(s.evictionPods()).equals(status.getEvictionPods())
        && Integer.valueOf(s.totalPods()).equals(status.getTotalpods())
        && pending.equals(s.pendingPods())
        && java.util.Objects.equals(s.lastError(), status.getLastError());
  }

  /**
   * A later attempt found the node as empty as before: no write, lastUpdate keeps the time of
   * success.
   */
  static boolean alreadySucceeded(
      String phase, NodeMaintenanceStatus status, DrainProgress.Snapshot s) {
    return PHASE_SUCCEEDED.equals(phase)
        && Integer.valueOf(100).equals(status.getDrainProgress())
        && Integer.valueOf(s.evictionPods()).equals(status.getEvictionPods())
        && Integer.valueOf(s.totalPods()).equals(status.getTotalpods())
        && (status.getPendingPods() == null || status.getPendingPods().isEmpty())
        && status.getLastError() == null;
  }

  private Result nodeGone(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    String message =
        "node "
            + nm.nodeName()
            + " not found: it was deleted during maintenance; delete this"
            + " NodeMaintenance (maintenance resumes if the node comes back)";
    NodeMaintenanceStatus st = nm.getStatus();
    boolean already =
        st != null && PHASE_FAILED.equals(st.getPhase()) && message.equals(st.getLastError());
    if (!already) {
      log.warn("node gone nodeMaintenance={} node={}", name, nm.nodeName());
      cluster.patchStatus(
          name,
          StatusPatch.of()
              .phase(PHASE_FAILED)
              .lastError(message)
              .pendingPods(List.of())
              .lastUpdate(clock.instant())
              .toJson());
      events.onMaintenance(nm, true, MaintenanceEventReasons.FAILED_MAINTENANCE, message);
    }
    drains.end(nm.getMetadata().getUid());
    succeeded(name);
    // The node informer brings us back if a node of that name appears again.
    return DONE;
  }

  // ---------------------------------------------------------------------------------------------
  // End of maintenance: restore exactly what we changed, then let the object go.

  private Result end(NodeMaintenance nm) throws ApiException {
    if (!Admission.accepted(nm)) {
      return DONE;
    }
    String name = nm.getMetadata().getName();
    String uid = nm.getMetadata().getUid();
    String node = nm.nodeName();
    // No step of this maintenance runs now (the work queue hands a key to one worker at a time),
    // so no eviction is in flight while the node is restored.
    drains.end(uid);
    Optional<NodeView> found = cluster.readNode(node);
    if (found.isPresent()) {
      Optional<NodePatches.Leaving> leaving = NodePatches.leave(found.get(), uid);
      if (leaving.isPresent()) {
        NodePatches.Leaving l = leaving.get();
        patchNode(node, l.patch(), "restoring node");
        String msg =
            "Maintenance "
                + name
                + " ended: "
                + (l.taintsRemoved().isEmpty()
                    ? "no taints to remove"
                    : "removed taints "
                        + l.taintsRemoved().stream()
                            .map(Taint::toString)
                            .collect(Collectors.joining(", ")))
                + (l.uncordons() ? "; uncordoned" : "; left cordoned as it was before maintenance");
        log.info(
            "node restored nodeMaintenance={} node={} taintsRemoved={} uncordoned={}",
            name,
            node,
            l.taintsRemoved(),
            l.uncordons());
        events.onNode(node, found.get().uid(), false, MaintenanceEventReasons.UNCORDON_NODE, msg);
      }
    } else {
      log.info("node gone, nothing to restore nodeMaintenance={} node={}", name, node);
    }
    succeeded(name);
    if (cluster.removeFinalizer(name)) {
      log.info("maintenance removed nodeMaintenance={} node={}", name, node);
      events.onMaintenance(
          nm,
          false,
          MaintenanceEventReasons.REMOVED_MAINTENANCE,
          "Removed a node maintenance of node " + node);
    }
    return DONE;
  }

  // ---------------------------------------------------------------------------------------------

  private Result failure(NodeMaintenance nm, String message) {
    String name = nm.getMetadata().getName();
    log.warn(
        "reconcile failed nodeMaintenance={} node={} error=\"{}\"", name, nm.nodeName(), message);
    if (nm.getMetadata().getDeletionTimestamp() == null && Admission.accepted(nm)) {
      try {
        cluster.patchStatus(
            name, StatusPatch.of().lastError(message).lastUpdate(clock.instant()).toJson());
      } catch (ApiException e) {
        log.debug("status not written nodeMaintenance={} code={}", name, e.getCode());
      }
    }
    return backoff(name);
  }

  /** A step of this maintenance succeeded: the next failure or conflict counts afresh. */
  private void succeeded(String name) {
    failures.forget(name);
    conflicts.remove(name);
  }

  /** Patches the node; a refusal comes back named (which request, which node). */
  private void patchNode(String node, String patch, String what) throws ApiException {
    try {
      cluster.patchNode(node, patch);
    } catch (ApiException e) {
      throw RequestRefused.named(what + " " + node, e, false);
    }
  }

  private Result backoff(String name) {
    return new Result(true, failures.when(name));
  }

  /** spec.evictionTimeout when set and positive (capped), else the controller's pass timeout. */
  static Duration passTimeout(NodeMaintenance nm, NodeMaintenanceSettings settings) {
    String spec = nm.getSpec() == null ? null : nm.getSpec().getEvictionTimeout();
    if (spec != null && !spec.isBlank()) {
      try {
        Duration d = GoDuration.parse(spec.strip());
        if (!d.isZero() && !d.isNegative()) {
          return d.compareTo(NodeMaintenanceSettings.MAX_PASS_TIMEOUT) > 0
              ? NodeMaintenanceSettings.MAX_PASS_TIMEOUT
              : d;
        }
      } catch (IllegalArgumentException e) {
        // The CRD's pattern keeps bad values out; an old object may still carry one: use the
        // default.
      }
    }
    return settings.passTimeout();
  }

  static String describeEntering(String name, NodePatches.Entering e, NodeView before) {
    StringBuilder s = new StringBuilder("Maintenance ").append(name).append(": ");
    if (!e.taintsAdded().isEmpty()) {
      s.append("tainted ")
          .append(e.taintsAdded().stream().map(Taint::toString).collect(Collectors.joining(", ")));
    }
    if (e.cordonedNow()) {
      s.append(e.taintsAdded().isEmpty() ? "" : " and ").append("cordoned");
    } else if (before.unschedulable() && !e.mark().cordoned()) {
      s.append(e.taintsAdded().isEmpty() ? "" : "; ")
          .append("already cordoned, stays cordoned when maintenance ends");
    }
    return s.toString();
  }

  private static String reason(NodeMaintenance nm) {
    return nm.getSpec() == null || nm.getSpec().getReason() == null ? "" : nm.getSpec().getReason();
  }

  private static int orZero(Integer i) {
    return i == null ? 0 : i;
  }
}
