package dev.capk.vmieviction.eviction;

import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.CONFLICT_RETRY;
import static dev.capk.vmieviction.eviction.VmiEvictionReconciler.DONE;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.eviction.Guest.GuestNodeMatch.NodeReadiness;
import dev.capk.vmieviction.eviction.VmiEvents.Told;
import dev.capk.vmieviction.kube.Metadata;
import dev.capk.vmieviction.logging.WaitLog;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * After an evacuation: once the recreated VMI runs and its guest node is Ready, uncordon the node
 * this controller cordoned (and only such a node: the mark says whose cordon it is). {@link
 * UncordonDecision} decides; this class carries the decision out.
 */
final class GuestNodeUncordoner {

  private static final Logger log = LoggerFactory.getLogger(GuestNodeUncordoner.class);

  /** What each VMI's uncordon waits for, as last told (by UID). */
  private final WaitLog waits = new WaitLog();

  private final StepContext c;

  GuestNodeUncordoner(StepContext c) {
    this.c = c;
  }

  Result check(String key, VirtualMachineInstance vmi) {
    String uid = vmi.getMetadata().getUid();
    if (vmi.getStatus() == null
        || !VirtualMachineInstanceStatus.PHASE_RUNNING.equals(vmi.getStatus().getPhase())) {
      return DONE; // an update will come when it runs
    }
    if (c.guests.unmarked.getIfPresent(uid) != null) {
      return DONE;
    }
    try {
      return uncordonIfOurs(key, vmi, c.guests.connect(vmi, Optional.empty()));
    } catch (GuestAccessException e) {
      switch (e.reason()) {
        case MissingClusterLabel,
            ClusterNamespaceRefused,
            ClusterNotFound,
            KubeconfigSecretNotFound -> {
          // No guest cluster to go to: nothing of ours can be there. Not an error for this VMI.
          c.guests.unmarked.put(uid, true);
          return DONE;
        }
        case GuestAPIRefused -> {
          // Asking again will not help until the tenant lifts it: say what refused, back off.
          Level level = waits.level(uid, e.getMessage());
          Told.UNCORDON_REFUSED.to(c.events, level, vmi, key, e.reason().name(), e.getMessage());
          return new Result(true, min(c.backoff(key), c.settings.retryInterval()));
        }
        default -> {
          // Retried with backoff while the guest cluster cannot be used: told once per cause.
          log.atLevel(waits.level(uid, e.reason() + ": " + e.getMessage()))
              .log(
                  "uncordon check postponed vmi={} reason={} detail=\"{}\"",
                  key,
                  e.reason(),
                  e.getMessage());
          return new Result(true, c.backoff(key));
        }
      }
    } catch (ApiException e) {
      if (e.getCode() == 409 && c.conflicted(key) <= Evacuator.MAX_QUICK_CONFLICTS) {
        log.debug("uncordon check: node changed since read, reading again vmi={}", key);
        return new Result(true, CONFLICT_RETRY);
      }
      log.atLevel(waits.level(uid, "HTTP " + e.getCode()))
          .log("uncordon check postponed vmi={} code={}", key, e.getCode());
      return new Result(true, min(c.backoff(key), c.settings.retryInterval()));
    }
  }

  /** Finds the VMI's guest node and, where {@link UncordonDecision} says so, uncordons it. */
  private Result uncordonIfOurs(String key, VirtualMachineInstance vmi, Guest guest)
      throws GuestAccessException, ApiException {
    String uid = vmi.getMetadata().getUid();
    String vmiName = vmi.getMetadata().getName();
    // From the cluster's node watch: the checks of all its Running VMIs cost its one list.
    Optional<V1Node> found = guest.findNode(vmiName);
    UncordonDecision decision =
        found.map(n -> UncordonDecision.of(n, vmi)).orElse(UncordonDecision.NOT_OURS);
    if (decision == UncordonDecision.NOT_OURS) {
      return noMark(key, uid);
    }
    V1Node node = found.get();
    String nodeName = node.getMetadata().getName();
    if (decision == UncordonDecision.WAIT) {
      // Looked at again every retry interval until the node is Ready: told once per node.
      log.atLevel(waits.level(uid, nodeName))
          .log("guest node not ready for uncordon yet vmi={} node={}", key, nodeName);
      return new Result(true, c.settings.retryInterval());
    }
    guest.unmark(node); // uncordons only a node cordoned as read: REMOVE_MARK removes the mark
    if (decision == UncordonDecision.UNCORDON) {
      Told.NODE_UNCORDONED.to(c.events, vmi, key, guest.cluster(), nodeName);
      guest.nodeEvent(
          node, false, VmiEvents.UNCORDONED, "Uncordoned: infra VMI " + key + " runs again");
    } else {
      log.info(
          "guest node already schedulable, mark removed vmi={} cluster={} node={}",
          key,
          guest.cluster(),
          nodeName);
    }
    // The node is back: a VMI of the same Cluster held by the quorum guard may go now.
    String cluster = Metadata.label(vmi, CapkLabels.CLUSTER_NAME);
    if (cluster != null) {
      c.waitOver(vmi.getMetadata().getNamespace() + "/" + cluster, null);
    }
    return noMark(key, uid);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** Nothing (more) of ours on this VMI's node: no need to look again. */
  private Result noMark(String key, String uid) {
    waits.forget(uid);
    c.guests.unmarked.put(uid, true);
    c.succeeded(key);
    return DONE;
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
      if (vmi == null
          || vmi.getMetadata() == null
          || vmi.getMetadata().getDeletionTimestamp() != null) {
        return WAIT;
      }
      VirtualMachineInstanceStatus status = vmi.getStatus();
      if (status == null) {
        return WAIT;
      }
      String evacuation = status.getEvacuationNodeName();
      if (evacuation != null && !evacuation.isBlank()) {
        return WAIT;
      }
      if (!VirtualMachineInstanceStatus.PHASE_RUNNING.equals(status.getPhase())) {
        return WAIT;
      }
      return NodeReadiness.of(node) == NodeReadiness.READY ? UNCORDON : WAIT;
    }

    /** The UID of the VMI we cordoned the node for, or null when we did not cordon it. */
    public static String markOf(V1Node node) {
      return Metadata.annotation(node, EvictionAnnotations.CORDONED_BY);
    }
  }
}
