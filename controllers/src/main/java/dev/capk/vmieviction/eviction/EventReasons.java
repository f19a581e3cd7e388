package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Reasons of the Kubernetes Events the controller emits on VMIs (besides {@code
 * GuestAccessException.Reason}). What each means and what to do about it: docs/operations.md,
 * "Events" (DocumentedEventReasonsTest keeps the two lists the same).
 */
public final class EventReasons {
  private EventReasons() {}

  public static final String DRAIN_STARTED = "DrainStarted";
  public static final String DRAIN_START_TIME_INVALID = "DrainStartTimeInvalid";
  public static final String DRAIN_START_TIME_RESTORED = "DrainStartTimeRestored";
  public static final String EVACUATION_LEFT_TO_KUBEVIRT = "EvacuationLeftToKubeVirt";
  public static final String RECONCILE_ERROR = "ReconcileError";
  public static final String CORDONED = "GuestNodeCordoned";
  public static final String DRAIN_BLOCKED = "DrainBlocked";
  public static final String DRAIN_REFUSED = "DrainRefused";
  public static final String DRAIN_SUCCEEDED = "DrainSucceeded";
  public static final String GUEST_NODE_NOT_FOUND = "GuestNodeNotFound";
  public static final String GUEST_NODE_CONFLICTS = "GuestNodeConflicts";
  public static final String DEADLINE_PASSED = "DrainDeadlinePassed";
  public static final String VMI_DELETED = "VMIDeleted";
  public static final String UNCORDONED = "GuestNodeUncordoned";
  public static final String INFRA_API_ERROR = "InfraAPIError";
  public static final String EVICTION_STRATEGY_UNKNOWN = "EvictionStrategyUnknown";
  public static final String KUBEVIRT_CONFIG_UNREADABLE = "KubeVirtConfigUnreadable";
  public static final String CLUSTER_PAUSED = "ClusterPaused";
  public static final String CLUSTER_DELETING = "ClusterDeleting";
  public static final String NODE_DRAIN_EXCLUDED = "NodeDrainExcluded";
  public static final String DRAIN_DEADLINE_SHORTENED = "DrainDeadlineShortened";
  public static final String MACHINE_CONTRACT_UNAVAILABLE = "MachineContractUnavailable";
  public static final String EVACUATION_HELD = "EvacuationHeld";
  public static final String QUORUM_GUARD_OVERRIDDEN = "QuorumGuardOverridden";
  public static final String DISRUPTION_LIMIT_OVERRIDDEN = "DisruptionLimitOverridden";
  public static final String EVACUATION_LIMIT_INVALID = "EvacuationLimitInvalid";
  public static final String MIGRATION_STARTED = "MigrationStarted";
  public static final String MIGRATION_SUCCEEDED = "MigrationSucceeded";
  public static final String MIGRATION_FAILED = "MigrationFailed";
  public static final String FALLING_BACK_TO_DRAIN = "FallingBackToDrain";
  public static final String LIVE_MIGRATION_POLICY_INVALID = "LiveMigrationPolicyInvalid";
  public static final String INFRA_CLUSTER_MISMATCH = "InfraClusterMismatch";

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
        DRAIN_START_TIME_RESTORED,
        true,
        "drain start annotation %s mid-drain, restored vmi=%s start=%s deadline=%s",
        "Annotation "
            + EvictionAnnotations.DRAIN_START_TIME
            + " %1$s%5$s during the drain; restored to the earliest start %3$s: the deadline %4$s"
            + " never moves later"),
    START_INVALID(
        DRAIN_START_TIME_INVALID,
        true,
        "drain start annotation malformed, replaced vmi=%s value=\"%s\" start=%s",
        "Annotation "
            + EvictionAnnotations.DRAIN_START_TIME
            + " value \"%2$s\" is not an RFC 3339 time in the past; drain start reset to %3$s"),
    /** Arguments: vmi, cluster, VMI name, providerID. */
    NODE_NOT_FOUND(
        GUEST_NODE_NOT_FOUND,
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
        EVICTION_STRATEGY_UNKNOWN,
        true,
        "unknown eviction strategy, not evacuating vmi=%s strategy=\"%s\"",
        "Eviction strategy \"%2$s\" is not one of %3$s: not evacuating this VMI, it is left to"
            + " KubeVirt"),
    /** Arguments: vmi, fallback strategy, infra node. */
    LEFT_TO_KUBEVIRT(
        EVACUATION_LEFT_TO_KUBEVIRT,
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
        INFRA_CLUSTER_MISMATCH, true, "vmi refused, left alone vmi=%s reason=\"%s\"", "%2$s");

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
