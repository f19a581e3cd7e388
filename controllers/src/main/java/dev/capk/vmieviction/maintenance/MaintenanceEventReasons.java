package dev.capk.vmieviction.maintenance;

/**
 * Event reasons. The first five are the Node Maintenance Operator's, so alerts and dashboards
 * written for it keep working; the others name the steps and refusals it did not event.
 */
public final class MaintenanceEventReasons {
  private MaintenanceEventReasons() {}

  public static final String BEGIN_MAINTENANCE = "BeginMaintenance";
  public static final String SUCCEED_MAINTENANCE = "SucceedMaintenance";
  public static final String FAILED_MAINTENANCE = "FailedMaintenance";
  public static final String UNCORDON_NODE = "UncordonNode";
  public static final String REMOVED_MAINTENANCE = "RemovedMaintenance";

  /** The node was tainted and cordoned. */
  public static final String CORDON_NODE = "CordonNode";

  /** An eviction was refused by a budget (or failed): the pod is tried again when it is due. */
  public static final String DRAIN_BLOCKED = "DrainBlocked";

  /** Some pod may not be deleted at all; retried with backoff. */
  public static final String DRAIN_REFUSED = "DrainRefused";

  /** Refused: spec.nodeName names no node. */
  public static final String NODE_NOT_FOUND = "NodeNotFound";

  /** Refused: another NodeMaintenance already targets the node. */
  public static final String DUPLICATE_MAINTENANCE = "DuplicateMaintenance";

  /**
   * A request of the maintenance was refused (an admission policy, RBAC, validation), or the node
   * changed at every look: retried with backoff, the reason named.
   */
  public static final String REQUEST_REFUSED = "RequestRefused";
}
