package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Kubernetes Events on VMIs: their reasons (besides {@code GuestAccessException.Reason}), the
 * constants below and those only the {@link Told} catalog uses, in its entries (what each means:
 * docs/operations.md, "Events"; DocumentedEventReasonsTest keeps the two lists the same), and where
 * they are written. Messages must never contain secrets.
 */
public interface VmiEvents {

  String DRAIN_STARTED = "DrainStarted";
  String RECONCILE_ERROR = "ReconcileError";
  String CORDONED = "GuestNodeCordoned";
  String DRAIN_BLOCKED = "DrainBlocked";
  String DRAIN_REFUSED = "DrainRefused";
  String DRAIN_SUCCEEDED = "DrainSucceeded";
  String GUEST_NODE_CONFLICTS = "GuestNodeConflicts";
  String DEADLINE_PASSED = "DrainDeadlinePassed";
  String VMI_DELETED = "VMIDeleted";
  String UNCORDONED = "GuestNodeUncordoned";
  String INFRA_API_ERROR = "InfraAPIError";
  String KUBEVIRT_CONFIG_UNREADABLE = "KubeVirtConfigUnreadable";
  String CLUSTER_PAUSED = "ClusterPaused";
  String DRAIN_DEADLINE_SHORTENED = "DrainDeadlineShortened";
  String EVACUATION_HELD = "EvacuationHeld";
  String QUORUM_GUARD_OVERRIDDEN = "QuorumGuardOverridden";
  String DISRUPTION_LIMIT_OVERRIDDEN = "DisruptionLimitOverridden";
  String MIGRATION_STARTED = "MigrationStarted";
  String MIGRATION_FAILED = "MigrationFailed";
  String INFRA_CLUSTER_MISMATCH = "InfraClusterMismatch";

  /** What an evacuation came to: never capped, never delayed. */
  Set<String> OUTCOMES = Set.of(DRAIN_SUCCEEDED, VMI_DELETED, DEADLINE_PASSED, UNCORDONED);

  /** The reasons repeated in the management cluster with external infra ({@link #mirrored}). */
  Set<String> MIRRORED =
      Set.of(DRAIN_STARTED, DRAIN_SUCCEEDED, VMI_DELETED, DEADLINE_PASSED, INFRA_CLUSTER_MISMATCH);

  /** One event: a Warning, else Normal. */
  void record(VirtualMachineInstance vmi, boolean warning, String reason, String message);

  /**
   * As series: one Event per VMI, evacuation and reason, updated on repeats, capped per evacuation
   * but for the {@link #OUTCOMES} (which {@code recorder} must treat as its outcome reasons).
   */
  static VmiEvents series(EventSeriesRecorder recorder) {
    return (vmi, warning, reason, message) -> {
      V1ObjectMeta meta = vmi.getMetadata();
      V1ObjectReference ref =
          new V1ObjectReference()
              .apiVersion(vmi.getApiVersion() == null ? "kubevirt.io/v1" : vmi.getApiVersion())
              .kind(vmi.getKind() == null ? "VirtualMachineInstance" : vmi.getKind())
              .namespace(meta.getNamespace())
              .name(meta.getName())
              .uid(meta.getUid())
              .resourceVersion(meta.getResourceVersion());
      recorder.record(ref, evacuation(vmi), warning, reason, message);
    };
  }

  /**
   * External infra: the VMI's events go to the infra cluster ({@code onVmi}), and the {@link
   * #MIRRORED} ones also to the management cluster, where the tenant's owners look: on the VMI's
   * KubevirtMachine (in the namespace of the Cluster the tenant mapping gives), and, for a refused
   * VMI (which maps to no Cluster), on the KubevirtClusters bound to where it was seen. Each
   * message names the infra VMI.
   *
   * @param management writes Events in the management cluster; must treat {@link #MIRRORED} as
   *     outcomes
   * @param infraName how messages name the infra connection (never its kubeconfig)
   */
  static VmiEvents mirrored(
      VmiEvents onVmi,
      EventSeriesRecorder management,
      TenantMapping tenants,
      Supplier<List<V1ObjectReference>> boundKubevirtClusters,
      String infraName) {
    return (vmi, warning, reason, message) -> {
      onVmi.record(vmi, warning, reason, message);
      if (!MIRRORED.contains(reason)) {
        return;
      }
      String vmiKey = vmi.getMetadata().getNamespace() + "/" + vmi.getMetadata().getName();
      String text = "Infra VMI " + vmiKey + " (" + infraName + "): " + message;
      if (INFRA_CLUSTER_MISMATCH.equals(reason)) {
        boundKubevirtClusters
            .get()
            .forEach(k -> management.record(k, vmiKey, warning, reason, text));
        return;
      }
      String machine = LenientJson.label(vmi, CapkLabels.KUBEVIRT_MACHINE_NAME);
      if (machine == null || machine.isBlank()) {
        return;
      }
      try {
        V1ObjectReference kubevirtMachine =
            new V1ObjectReference()
                .apiVersion(CapkApi.GROUP + "/" + CapkApi.VERSION)
                .kind(CapkApi.KUBEVIRT_MACHINE_KIND)
                .namespace(tenants.clusterOf(vmi).namespace())
                .name(machine);
        management.record(kubevirtMachine, evacuation(vmi), warning, reason, text);
      } catch (GuestAccessException e) {
        // Not mapped to a Cluster: said on the VMI.
      }
    };
  }

  /** An evacuation is known by its start: a later one of the same VMI starts new series. */
  static String evacuation(VirtualMachineInstance vmi) {
    String start = LenientJson.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME);
    return start == null ? "" : start;
  }

  /**
   * The catalog of what an evacuation both logs and events: each entry's reason, whether its event
   * is a Warning, its log line and its event message, both formatted ({@link String#format}, by
   * position) from the same arguments, so that one call says both. Without a reason of its own, the
   * event's reason is the second argument.
   */
  enum Told {
    STARTED(
        DRAIN_STARTED,
        false,
        "evacuation started vmi=%s infraNode=%s start=%s deadline=%s",
        "Infra node %2$s is being drained: draining the guest node, then deleting this VMI;"
            + " deadline %4$s"),
    /** Arguments: how it was changed, vmi, start, deadline, and its value as {@code (to "...")}. */
    START_RESTORED(
        "DrainStartTimeRestored",
        true,
        "drain start annotation %s mid-drain, restored vmi=%s start=%s deadline=%s",
        "Annotation "
            + EvictionAnnotations.DRAIN_START_TIME
            + " %1$s%5$s during the drain; restored to the earliest start %3$s: the deadline %4$s"
            + " never moves later"),
    START_INVALID(
        "DrainStartTimeInvalid",
        true,
        "drain start annotation malformed, replaced vmi=%s value=\"%s\" start=%s",
        "Annotation "
            + EvictionAnnotations.DRAIN_START_TIME
            + " value \"%2$s\" is not an RFC 3339 time in the past; drain start reset to %3$s"),
    /** Arguments: vmi, cluster, VMI name, providerID. */
    NODE_NOT_FOUND(
        "GuestNodeNotFound",
        false,
        "guest node not found vmi=%s cluster=%s",
        "No guest node named %3$s or with providerID %4$s in cluster %2$s: nothing to drain"),
    NODE_CORDONED(
        CORDONED,
        false,
        "guest node cordoned vmi=%s cluster=%s node=%s",
        "Cordoned guest node %3$s in cluster %2$s"),
    /** Arguments: vmi, cluster, node, the refusals as a list, then joined. */
    REFUSED(
        DRAIN_REFUSED,
        true,
        "drain refused vmi=%s cluster=%s node=%s refusals=%s",
        "Drain of guest node %3$s refused: %5$s"),
    /** Arguments: vmi, node, the drain's summary, then what became of the VMI. */
    DRAINED(
        DRAIN_SUCCEEDED,
        false,
        "guest node drained vmi=%s node=%s summary=\"%s\"%s",
        "Guest node %2$s drained: %3$s%4$s"),
    /** Arguments: vmi, the outcome, why. */
    DELETED(VMI_DELETED, false, "vmi deleted vmi=%s outcome=%s", "Deleted (%2$s) %3$s"),
    DEADLINE(
        DEADLINE_PASSED,
        true,
        "drain deadline passed, deleting vmi=%s deadline=%s origin=\"%s\" blockers=\"%s\"",
        "Guest node not drained by %2$s (%3$s); deleting the VMI anyway. Still blocking: %4$s"),
    INFRA_FAILED(
        INFRA_API_ERROR,
        true,
        "infra API call failed vmi=%s step=\"%s\" code=%s error=\"%s\"",
        "%2$s failed: %4$s"),
    /** Arguments: vmi, strategy (shortened), the known strategies. */
    STRATEGY_UNKNOWN(
        "EvictionStrategyUnknown",
        true,
        "unknown eviction strategy, not evacuating vmi=%s strategy=\"%s\"",
        "Eviction strategy \"%2$s\" is not one of %3$s: not evacuating this VMI, it is left to"
            + " KubeVirt"),
    /** Arguments: vmi, fallback strategy, infra node. */
    LEFT_TO_KUBEVIRT(
        "EvacuationLeftToKubeVirt",
        false,
        "evacuation left to KubeVirt, no eviction strategy set vmi=%s fallback=%s",
        "Infra node %3$s is being drained, but neither this VMI nor the KubeVirt CR sets an"
            + " evictionStrategy, so the controller's fallback (--default-eviction-strategy=%2$s)"
            + " applies and KubeVirt handles this VMI itself. To have its guest node drained first,"
            + " set evictionStrategy: External on the VMI (CAPK's VM template) or in the KubeVirt"
            + " CR."),
    CONFIG_UNREADABLE(
        KUBEVIRT_CONFIG_UNREADABLE,
        true,
        "eviction strategy unknown, evacuation waits vmi=%s unreadable=\"%s\"",
        "This VMI sets no evictionStrategy, so the KubeVirt CR's"
            + " spec.configuration.evictionStrategy decides whether the controller evacuates it,"
            + " and the KubeVirt CR could not be read (%2$s). Neither evacuated nor left to"
            + " KubeVirt until it is read; trying again with backoff."),
    /** Arguments: vmi, the reason (the event's), the failure, retry in, deadline. */
    STEP_FAILED(
        null,
        true,
        "evacuation step failed vmi=%s reason=%s detail=\"%s\" retryIn=%s deadline=%s",
        "%3$s; retrying, VMI deleted anyway at %5$s"),
    CLUSTER_MISMATCH(
        INFRA_CLUSTER_MISMATCH, true, "vmi refused, left alone vmi=%s reason=\"%s\"", "%2$s"),
    HELD(
        EVACUATION_HELD,
        false,
        "evacuation held vmi=%s cluster=%s role=%s waitsFor=\"%s\" goAheadAt=%s",
        "The %3$s guest node is not drained yet, waiting for: %4$s; goes ahead anyway at %5$s"
            + " (deadline %6$s minus --drain-reserve)"),
    /** Arguments: vmi, cluster, role, what it waited for, deadline, the reserve. */
    QUORUM_OVERRIDDEN(
        QUORUM_GUARD_OVERRIDDEN,
        true,
        "tenant safety overridden at deadline minus reserve vmi=%1$s cluster=%2$s role=%3$s"
            + " waitedFor=\"%4$s\" deadline=%5$s",
        "Held for the quorum guard until the deadline %5$s minus --drain-reserve %6$s, still"
            + " waiting for: %4$s. Going ahead anyway: the tenant's control plane may lose quorum:"
            + " another control-plane member is down or being evacuated"),
    LIMIT_OVERRIDDEN(
        DISRUPTION_LIMIT_OVERRIDDEN,
        true,
        "tenant safety overridden at deadline minus reserve vmi=%1$s cluster=%2$s role=%3$s"
            + " waitedFor=\"%4$s\" deadline=%5$s",
        "Held for the per-cluster limit until the deadline %5$s minus --drain-reserve %6$s, still"
            + " waiting for: %4$s. Going ahead anyway: more worker VMIs of the Cluster than its"
            + " limit are drained at once"),
    /** Arguments: vmi, value, the flag's limit used (with " (unlimited)" when it is). */
    LIMIT_INVALID(
        "EvacuationLimitInvalid",
        true,
        "cluster evacuation limit invalid vmi=%s value=\"%s\" used=%s",
        "Cluster annotation "
            + ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION
            + " value \"%2$s\" is not a count or a percentage (e.g. 2 or 25%%): using"
            + " --max-concurrent-evacuations-per-cluster %3$s"),
    POLICY_INVALID(
        "LiveMigrationPolicyInvalid",
        true,
        "live-migration annotation invalid vmi=%s value=\"%s\"",
        "Cluster annotation "
            + ClusterApi.LIVE_MIGRATION_ANNOTATION
            + " value \"%2$s\" is neither never nor prefer; using --live-migration=%3$s"),
    MIGRATING(
        MIGRATION_STARTED,
        false,
        "live migration started vmi=%s migration=%s attempt=%s infraNode=%s",
        "Live-migrating off infra node %4$s (VirtualMachineInstanceMigration %2$s, attempt %3$s of"
            + " %5$s); the guest drain follows if it is not done by %6$s"),
    MIGRATED(
        "MigrationSucceeded",
        false,
        "live migration succeeded vmi=%s node=%s",
        "Live-migrated to infra node %2$s: no guest drain, the VMI keeps running"),
    ATTEMPT_FAILED(
        MIGRATION_FAILED,
        true,
        "live migration failed vmi=%s attempt=%s then=\"%s\"",
        "Live migration attempt %2$s failed or vanished; %3$s"),
    FALLBACK(
        "FallingBackToDrain",
        true,
        "falling back to the guest drain vmi=%s why=\"%s\"",
        "Not live-migrated: %2$s%3$s. Draining the guest node, then deleting the VMI; deadline %4$s"),
    LIMITS_UNREADABLE(
        KUBEVIRT_CONFIG_UNREADABLE,
        true,
        "live migration waits for KubeVirt's limits vmi=%s unreadable=\"%s\"",
        "KubeVirt's migration limits (the KubeVirt CR's spec.configuration.migrations) could not"
            + " be read (%2$s): no live migration is started until they are; the guest drain"
            + " follows at %3$s if they stay unreadable"),
    CONTRACT_UNAVAILABLE(
        "MachineContractUnavailable",
        true,
        "cluster api contract not fully known vmi=%s missing=\"%s\"",
        "Cluster API's settings for this machine could not all be read (%2$s): what is missing"
            + " does not apply, the controller's own settings do"),
    SHORTENED(
        DRAIN_DEADLINE_SHORTENED,
        false,
        "deadline moved earlier by cluster api vmi=%s deadline=%s origin=\"%s\"",
        "Deadline moved earlier to %2$s by %3$s (shorter than --drain-timeout; it never moves"
            + " later)"),
    PAUSED(
        CLUSTER_PAUSED,
        true,
        "cluster paused, guest left untouched vmi=%s cluster=%s deadline=%s",
        "Cluster %2$s is paused (spec.paused or annotation "
            + ClusterApi.PAUSED_ANNOTATION
            + "): its guest node is not cordoned or drained; VMI deleted anyway at %3$s"),
    DRAIN_EXCLUDED(
        "NodeDrainExcluded",
        false,
        "machine excluded from draining, deleting without drain vmi=%s machine=%s",
        "Machine %2$s has annotation "
            + ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION
            + ": its guest node is not drained, the VMI is deleted now"),
    DELETING(
        "ClusterDeleting",
        false,
        "cluster being deleted, evacuation proceeds vmi=%s cluster=%s deletionTimestamp=%s"
            + " deadline=%s",
        "Cluster %2$s is being deleted (since %3$s): the evacuation proceeds as usual, its guest"
            + " node drained first; VMI deleted at the latest at %4$s"),
    NODE_UNCORDONED(
        UNCORDONED,
        false,
        "guest node uncordoned vmi=%s cluster=%s node=%s",
        "Uncordoned guest node %3$s in cluster %2$s: the VMI runs again"),
    /** Arguments: vmi, the reason, what refused. */
    UNCORDON_REFUSED(
        null, true, "uncordon refused vmi=%1$s detail=\"%3$s\"", "%3$s; retrying with backoff");

    private static final Logger log = LoggerFactory.getLogger(Evacuator.class);

    final String reason;
    final boolean warning;
    final String line;
    final String message;

    Told(String reason, boolean warning, String line, String message) {
      this.reason = reason;
      this.warning = warning;
      this.line = line;
      this.message = message;
    }

    /** Logs the line (at WARN for a Warning, else INFO) and records the event. */
    void to(VmiEvents events, VirtualMachineInstance vmi, Object... args) {
      to(events, warning ? Level.WARN : Level.INFO, vmi, args);
    }

    /** As above, with the log line at {@code level}: a wait told once per change. */
    void to(VmiEvents events, Level level, VirtualMachineInstance vmi, Object... args) {
      if (log.isEnabledForLevel(level)) {
        log.atLevel(level).log(String.format(line, args));
      }
      String told = reason != null ? reason : (String) args[1];
      events.record(vmi, warning, told, String.format(message, args));
    }
  }
}
