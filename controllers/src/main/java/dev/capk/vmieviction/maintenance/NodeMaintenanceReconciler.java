package dev.capk.vmieviction.maintenance;

import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.PHASE_FAILED;
import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.PHASE_RUNNING;
import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.PHASE_SUCCEEDED;
import static dev.capk.vmieviction.drain.Cordoner.MAX_WRITES;
import static dev.capk.vmieviction.maintenance.MaintenanceEvents.UNCORDON_NODE;

import com.google.common.base.Strings;
import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceStatus;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.maintenance.MaintenanceStatus.Patch;
import dev.capk.vmieviction.maintenance.NodePatches.Leaving;
import io.kubernetes.client.extended.controller.reconciler.Reconciler;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.extended.workqueue.ratelimiter.ItemExponentialFailureRateLimiter;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Puts nodes into maintenance as NodeMaintenance objects ask, the way the Node Maintenance Operator
 * does: validate before changing anything; add the finalizer; taint and cordon the node, recording
 * on it what was changed; drain it one short step per reconcile (pods leaving the node wake the
 * next step, refused evictions their own due time), progress in the status; Succeeded when no
 * evictable pod is left. On deletion: remove exactly the taints it added, uncordon only a node it
 * cordoned, drop the finalizer.
 *
 * <p>Restart-safe: what was changed lives on the node (in the same patch as the change), the counts
 * in the status; what is in memory (backoff, eviction retry schedules) only paces retries.
 */
public final class NodeMaintenanceReconciler implements Reconciler {
  private static final Logger log = LoggerFactory.getLogger(NodeMaintenanceReconciler.class);

  static final Result DONE = new Result(false);

  private final Function<String, NodeMaintenance> cache;
  private final MaintenanceCluster cluster;
  private final DrainSteps drains;
  private final MaintenanceEvents events;
  private final NodeMaintenanceSettings settings;
  private final Clock clock;
  private final ItemExponentialFailureRateLimiter<String> failures;

  /** {@code cache}: the NodeMaintenance by name from the informer, or null. */
  public NodeMaintenanceReconciler(
      Function<String, NodeMaintenance> cache,
      MaintenanceCluster cluster,
      DrainSteps drains,
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
      return gone(name);
    }
    try {
      if (nm.getMetadata().getDeletionTimestamp() == null) {
        if (!Admission.accepted(nm) && (Admission.inert(nm) || !admit(nm))) {
          return DONE;
        }
        // The cache can lag behind our own status writes: counts and phase read from it could
        // overwrite what is recorded. Decide on the object as the API server has it now.
        Optional<NodeMaintenance> live = cluster.readMaintenance(name);
        if (live.isEmpty()) {
          return gone(name);
        }
        nm = live.get();
      }
      if (nm.getMetadata().getDeletionTimestamp() != null) {
        return end(nm);
      }
      // Not accepted: replaced by a new object of the same name, whose own watch event brings it.
      return Admission.accepted(nm) ? maintain(nm) : DONE;
    } catch (ApiException e) {
      // A refusal, or a node that changed at every look: asking again at once will not help.
      boolean named = e instanceof Refused;
      String msg = named ? e.getMessage() : "API request failed: " + RawApi.describe(e);
      RawApi.Meaning answer = named ? RawApi.Meaning.REFUSED : RawApi.meaning(e, false);
      if (answer == RawApi.Meaning.REFUSED || answer == RawApi.Meaning.CONFLICT) {
        events.onMaintenance(nm, true, MaintenanceEvents.REQUEST_REFUSED, msg);
      }
      return failure(nm, msg);
    } catch (RuntimeException e) {
      log.error("unexpected failure nodeMaintenance={}", name, e);
      return failure(nm, "unexpected " + e.getClass().getSimpleName() + " (see controller log)");
    }
  }

  /** Nothing changes before the maintenance is valid and the node's only one: true if accepted. */
  private boolean admit(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    String node = nm.nodeName();
    if (node == null || node.isBlank()) {
      fail(nm, MaintenanceEvents.NODE_NOT_FOUND, "invalid nodeName: spec.nodeName is empty");
      return false;
    }
    // The API server's list: the cache may not show a maintenance accepted a moment ago.
    List<NodeMaintenance> all = cluster.listMaintenances();
    String uid = nm.getMetadata().getUid();
    NodeMaintenance live =
        all.stream().filter(o -> uid.equals(o.getMetadata().getUid())).findFirst().orElse(null);
    if (live == null || Admission.accepted(live) || Admission.inert(live)) {
      return live != null
          && Admission.accepted(live)
          && live.getMetadata().getDeletionTimestamp() == null;
    }
    if (cluster.readNode(node).isEmpty()) {
      String fix = "delete this NodeMaintenance and create one for an existing node";
      String message = "invalid nodeName, no node with name %s found; nothing was changed: %s";
      fail(nm, MaintenanceEvents.NODE_NOT_FOUND, message.formatted(node, fix));
      return false;
    }
    Optional<NodeMaintenance> first = Admission.precedence(live, all);
    if (first.isPresent()) {
      String owner = first.get().getMetadata().getName();
      String created =
          Optional.ofNullable(first.get().getMetadata().getCreationTimestamp())
              .map(t -> " (created " + MaintenanceStatus.rfc3339(t.toInstant()) + ")")
              .orElse("");
      String message =
          "invalid nodeName, a NodeMaintenance for node %s already exists: %s%s; this one changed"
              + " nothing: delete it";
      fail(nm, MaintenanceEvents.DUPLICATE_MAINTENANCE, message.formatted(node, owner, created));
      return false;
    }
    if (!cluster.changeFinalizer(name, true)) {
      return false;
    }
    String why = nm.getSpec() == null ? null : nm.getSpec().getReason();
    String message = "Begin a node maintenance of node " + node;
    tell(
        nm,
        false,
        MaintenanceEvents.BEGIN_MAINTENANCE,
        message + (Strings.isNullOrEmpty(why) ? "" : ": " + why));
    status(name, new Patch().phase(PHASE_RUNNING).lastError(null));
    return true;
  }

  /** Failed: said in the status (no pod pending) and in a warning. */
  private void fail(NodeMaintenance nm, String reason, String message) throws ApiException {
    Patch failed = new Patch().phase(PHASE_FAILED).lastError(message).pendingPods(List.of());
    status(nm.getMetadata().getName(), failed);
    tell(nm, true, reason, message);
  }

  /** A step of the maintenance: one log line and one event on it, in the same words. */
  private void tell(NodeMaintenance nm, boolean warning, String reason, String message) {
    log.atLevel(warning ? Level.WARN : Level.INFO)
        .log(
            "maintenance {} nodeMaintenance={} node={} message=\"{}\"",
            reason,
            nm.getMetadata().getName(),
            nm.nodeName(),
            message);
    events.onMaintenance(nm, warning, reason, message);
  }

  private Result maintain(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    String phase = nm.phase();
    Optional<V1Node> found = cluster.readNode(nm.nodeName());
    if (found.isEmpty()) {
      return nodeGone(nm);
    }
    if (!PHASE_RUNNING.equals(phase) && !PHASE_SUCCEEDED.equals(phase)) {
      // First look after acceptance by an older release, or the node is back after it was gone.
      status(name, new Patch().phase(PHASE_RUNNING).lastError(null));
    }
    if (!enter(nm, found.get())) {
      return nodeGone(nm);
    }
    DrainStep step = drainStep(nm).orElse(null);
    if (step == null) {
      return backoff(name);
    }
    NodeMaintenanceStatus status = nm.getStatus();
    MaintenanceStatus.Snapshot s = MaintenanceStatus.after(status, step);
    // Steps come often (each pod that leaves wakes one): write only what changed. A later look
    // that finds the node as empty as before writes nothing: lastUpdate keeps the time of success.
    String now = step.complete() ? PHASE_SUCCEEDED : PHASE_RUNNING;
    boolean write = !now.equals(phase) || !MaintenanceStatus.shows(status, s);
    if (write) {
      status(name, new Patch().phase(now).progress(s).lastError(s.lastError()));
    }
    failures.forget(name);
    if (!step.complete()) {
      notDrainedYet(nm, step, s, write);
      return new Result(true, nextStep(step));
    }
    // Drained: nothing more to watch. A resync (or a node event) looks again with a fresh drain.
    drains.end(name);
    if (!PHASE_SUCCEEDED.equals(phase)) {
      String message =
          "Node maintenance was succeeded: node %s is cordoned and drained"
              + " (%d pod(s) evicted, %d left in place)";
      tell(
          nm,
          false,
          MaintenanceEvents.SUCCEED_MAINTENANCE,
          message.formatted(nm.nodeName(), step.evicted(), step.skipped().size()));
      events.onNode(
          found.get(),
          false,
          MaintenanceEvents.SUCCEED_MAINTENANCE,
          "Node is in maintenance (NodeMaintenance " + name + "): cordoned and drained");
    }
    return DONE;
  }

  /** Taints and cordons the node, where it is not yet; false if the node is gone. */
  private boolean enter(NodeMaintenance nm, V1Node read) throws ApiException {
    String name = nm.getMetadata().getName();
    var w =
        writeNode(
            read,
            n -> NodePatches.enter(n, settings.taints(), name, nm.getMetadata().getUid()),
            NodePatches.Entering::patch,
            "tainting and cordoning node");
    Optional.ofNullable(w.change())
        .flatMap(c -> c.describe(name))
        .ifPresent(
            msg -> {
              events.onNode(read, false, MaintenanceEvents.CORDON_NODE, msg);
              tell(nm, false, MaintenanceEvents.CORDON_NODE, msg);
            });
    return w.result() != Cordoner.Result.GONE;
  }

  /** Writes the change {@code plan} makes of the node ({@link Cordoner#write}), unless refused. */
  private <T> Cordoner.Written<T> writeNode(
      V1Node read, Function<V1Node, Optional<T>> plan, Function<T, String> patch, String what)
      throws ApiException {
    String name = read.getMetadata().getName();
    Cordoner.Written<T> w =
        Cordoner.write(read, plan, patch, MAX_WRITES, cluster::patchNode, cluster::readNode);
    return switch (w.result()) {
      case REFUSED ->
          throw new Refused(what + " " + name + " refused: " + RawApi.describe(w.answer()));
      case CHANGED ->
          throw new ApiException(
              409, "node %s changed at every look, %d times in a row".formatted(name, MAX_WRITES));
      default -> w;
    };
  }

  /** The drain's next step; empty when the drain was refused (told: back off). */
  private Optional<DrainStep> drainStep(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    String node = nm.nodeName();
    try {
      DrainOptions options =
          DrainOptions.of(
              o -> {
                // NMO's drain: VM pods (no controller) and emptyDir data go; DaemonSets stay.
                o.force = o.ignoreAllDaemonSets = o.deleteEmptyDirData = true;
                // Bounds the step's eviction requests; the step itself never waits for pods.
                o.timeout = settings.passTimeout(nm);
              });
      return Optional.of(drains.step(name, node, options));
    } catch (DrainRefusedException refused) {
      // Retried with backoff: logged once per refusal (the status's last error), events keep it.
      NodeMaintenanceStatus st = nm.getStatus();
      boolean told = st != null && refused.getMessage().equals(st.getLastError());
      log.atLevel(told ? Level.DEBUG : Level.WARN)
          .log(
              "drain refused nodeMaintenance={} node={} error=\"{}\"",
              name,
              node,
              refused.getMessage());
      status(name, new Patch().phase(PHASE_RUNNING).lastError(refused.getMessage()));
      events.onMaintenance(nm, true, MaintenanceEvents.DRAIN_REFUSED, refused.getMessage());
      return Optional.empty();
    }
  }

  /** Not drained yet: the progress logged when it changed, a refused eviction told. */
  private void notDrainedYet(
      NodeMaintenance nm, DrainStep step, MaintenanceStatus.Snapshot s, boolean changed) {
    if (changed) {
      log.info(
          "node not drained yet nodeMaintenance={} node={} pending={} terminating={} progress={}%"
              + " lastError=\"{}\"",
          nm.getMetadata().getName(),
          nm.nodeName(),
          s.pendingPods().size(),
          step.terminating().size(),
          s.percent(),
          s.lastError());
    }
    if (MaintenanceStatus.held(step) && step.requests() > 0) {
      // An eviction was refused (or failed) just now: one event per refused attempt.
      events.onMaintenance(
          nm,
          true,
          MaintenanceEvents.DRAIN_BLOCKED,
          "Node " + nm.nodeName() + " not drained yet, retrying: " + s.lastError());
    }
  }

  /** When the earliest waiting pod is due again; else the longest retry wait (the watch wakes). */
  Duration nextStep(DrainStep step) {
    Duration max = settings.maxRetryInterval();
    Duration d = step.nextTry().map(t -> Duration.between(clock.instant(), t)).orElse(max);
    return d.isNegative() ? Duration.ZERO : d.compareTo(max) > 0 ? max : d;
  }

  private Result nodeGone(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    String message =
        "node "
            + nm.nodeName()
            + " not found: it was deleted during maintenance; delete this"
            + " NodeMaintenance (maintenance resumes if the node comes back)";
    if (!PHASE_FAILED.equals(nm.phase()) || !message.equals(nm.getStatus().getLastError())) {
      fail(nm, MaintenanceEvents.FAILED_MAINTENANCE, message);
    }
    return gone(name); // the node informer brings us back if the node appears again
  }

  /** End of maintenance: restore exactly what we changed, then let the object go. */
  private Result end(NodeMaintenance nm) throws ApiException {
    String name = nm.getMetadata().getName();
    // No step of it runs now (one worker per key): no eviction is in flight while restoring.
    drains.end(name);
    if (!Admission.accepted(nm)) {
      return DONE;
    }
    Optional<V1Node> found = cluster.readNode(nm.nodeName());
    if (found.isPresent()) {
      String uid = nm.getMetadata().getUid();
      var w =
          writeNode(found.get(), n -> NodePatches.leave(n, uid), Leaving::patch, "restoring node");
      Optional.ofNullable(w.change())
          .ifPresent(c -> events.onNode(found.get(), false, UNCORDON_NODE, c.describe(name)));
    }
    failures.forget(name);
    if (cluster.changeFinalizer(name, false)) {
      String message = "Removed a node maintenance of node " + nm.nodeName();
      tell(nm, false, MaintenanceEvents.REMOVED_MAINTENANCE, message);
    }
    return DONE;
  }

  private Result failure(NodeMaintenance nm, String message) {
    String name = nm.getMetadata().getName();
    log.warn(
        "reconcile failed nodeMaintenance={} node={} error=\"{}\"", name, nm.nodeName(), message);
    if (nm.getMetadata().getDeletionTimestamp() == null && Admission.accepted(nm)) {
      try {
        status(name, new Patch().lastError(message));
      } catch (ApiException e) {
        log.debug("status not written nodeMaintenance={} code={}", name, e.getCode());
      }
    }
    return backoff(name);
  }

  private void status(String name, Patch patch) throws ApiException {
    cluster.patchStatus(name, patch.lastUpdate(clock.instant()).toJson());
  }

  private Result gone(String name) {
    drains.end(name);
    failures.forget(name);
    return DONE;
  }

  private Result backoff(String name) {
    return new Result(true, failures.when(name));
  }

  /** A request the API server refused, named (which, on which node, why). */
  private static final class Refused extends ApiException {
    Refused(String message) {
      super(message);
    }
  }

  /**
   * The drains of maintained nodes, one short step at a time ({@link NodeMaintenanceController}).
   */
  public interface DrainSteps {

    /** Sends the evictions that are due and returns at once; pods leaving wake {@code name}. */
    DrainStep step(String name, String node, DrainOptions options)
        throws ApiException, DrainRefusedException;

    /**
     * The drain is over (done, node gone, deleted, gone from the cache): stop watching, forget it.
     * A drain is ended before the finalizer goes, so a namesake created later starts afresh.
     */
    void end(String name);
  }
}
