package dev.capk.vmieviction.eviction;

/**
 * Reasons of the Kubernetes Events the controller emits (besides {@code
 * GuestAccessException.Reason}).
 */
public final class EventReasons {
  private EventReasons() {}

  public static final String DRAIN_STARTED = "DrainStarted";
  public static final String DRAIN_START_TIME_INVALID = "DrainStartTimeInvalid";

  /** The drain start was removed, moved later or broken mid-drain and has been put back. */
  public static final String DRAIN_START_TIME_RESTORED = "DrainStartTimeRestored";

  /** Marked for evacuation, but only the fallback strategy applies, which is not External. */
  public static final String EVACUATION_LEFT_TO_KUBEVIRT = "EvacuationLeftToKubeVirt";

  /** A bug or an unexpected answer while draining (details in the controller log). */
  public static final String RECONCILE_ERROR = "ReconcileError";

  public static final String CORDONED = "GuestNodeCordoned";
  public static final String DRAIN_BLOCKED = "DrainBlocked";
  public static final String DRAIN_REFUSED = "DrainRefused";
  public static final String DRAIN_SUCCEEDED = "DrainSucceeded";
  public static final String GUEST_NODE_NOT_FOUND = "GuestNodeNotFound";

  /** The guest node changed at every look, several times in a row: the retries back off. */
  public static final String GUEST_NODE_CONFLICTS = "GuestNodeConflicts";

  public static final String DEADLINE_PASSED = "DrainDeadlinePassed";
  public static final String VMI_DELETED = "VMIDeleted";
  public static final String UNCORDONED = "GuestNodeUncordoned";
  public static final String INFRA_API_ERROR = "InfraAPIError";
  public static final String EVICTION_STRATEGY_UNKNOWN = "EvictionStrategyUnknown";

  /**
   * The KubeVirt CR could not be read (429, 5xx, 403, no response) while it decides: a VMI without
   * its own strategy waits, a migration is not started without KubeVirt's limits.
   */
  public static final String KUBEVIRT_CONFIG_UNREADABLE = "KubeVirtConfigUnreadable";

  /** The VMI's Cluster is paused: its guest is left untouched until the deadline. */
  public static final String CLUSTER_PAUSED = "ClusterPaused";

  /**
   * The VMI's Cluster is being deleted: said once per evacuation, which proceeds as usual (guest
   * node drained first, the deadline bounds it).
   */
  public static final String CLUSTER_DELETING = "ClusterDeleting";

  /** The VMI's Machine is excluded from draining: deleted without draining its guest node. */
  public static final String NODE_DRAIN_EXCLUDED = "NodeDrainExcluded";

  /** The Machine's drain timeout or the KubevirtMachine's grace time moved the deadline earlier. */
  public static final String DRAIN_DEADLINE_SHORTENED = "DrainDeadlineShortened";

  /** Cluster API's objects behind the VMI could not all be read (not found, not allowed). */
  public static final String MACHINE_CONTRACT_UNAVAILABLE = "MachineContractUnavailable";

  /** The tenant-safety policy holds the evacuation: the message says what it waits for. */
  public static final String EVACUATION_HELD = "EvacuationHeld";

  /** A control-plane VMI held by the quorum guard went ahead at its deadline minus the reserve. */
  public static final String QUORUM_GUARD_OVERRIDDEN = "QuorumGuardOverridden";

  /** A worker VMI held by the per-cluster limit went ahead at its deadline minus the reserve. */
  public static final String DISRUPTION_LIMIT_OVERRIDDEN = "DisruptionLimitOverridden";

  /** The Cluster's max-concurrent-evacuations annotation is not a limit: the flag's applies. */
  public static final String EVACUATION_LIMIT_INVALID = "EvacuationLimitInvalid";

  /** A VirtualMachineInstanceMigration was created to move the VMI off the drained infra node. */
  public static final String MIGRATION_STARTED = "MigrationStarted";

  /** The VMI live-migrated off the drained infra node: no guest drain, no VMI delete. */
  public static final String MIGRATION_SUCCEEDED = "MigrationSucceeded";

  /** A live migration attempt failed (another may follow, or the drain). */
  public static final String MIGRATION_FAILED = "MigrationFailed";

  /** Live migration was not possible or not in time: the guest drain and VMI delete follow. */
  public static final String FALLING_BACK_TO_DRAIN = "FallingBackToDrain";

  /** The Cluster's live-migration annotation is neither never nor prefer: the flag's applies. */
  public static final String LIVE_MIGRATION_POLICY_INVALID = "LiveMigrationPolicyInvalid";

  /**
   * External infra: the VMI's labels name a Cluster (or namespace) that no KubevirtCluster binds to
   * the infra cluster and namespace the VMI runs in; it is never drained nor deleted.
   */
  public static final String INFRA_CLUSTER_MISMATCH = "InfraClusterMismatch";
}
