package dev.capk.vmieviction.api.maintenance;

/**
 * Names of the {@code nodemaintenance.medik8s.io/v1beta1} API, the Node Maintenance Operator's
 * (KubeVirt's, now Medik8s's), which this controller serves as well: same group, version, kind,
 * fields and finalizer, so objects and tools written for that operator work unchanged.
 */
public final class NodeMaintenanceApi {
  private NodeMaintenanceApi() {}

  public static final String GROUP = "nodemaintenance.medik8s.io";
  public static final String VERSION = "v1beta1";
  public static final String API_VERSION = GROUP + "/" + VERSION;
  public static final String KIND = "NodeMaintenance";
  public static final String PLURAL = "nodemaintenances";

  /**
   * The Node Maintenance Operator's finalizer. The same name, so objects created while that
   * operator ran are cleaned up by this controller too.
   */
  public static final String FINALIZER = "foregroundDeleteNodeMaintenance";

  /** status.phase: maintenance started, the node is being drained. */
  public static final String PHASE_RUNNING = "Running";

  /** status.phase: the node is tainted, cordoned and empty of evictable pods. */
  public static final String PHASE_SUCCEEDED = "Succeeded";

  /** status.phase: refused (unknown node, another maintenance for the node) or the node is gone. */
  public static final String PHASE_FAILED = "Failed";

  /**
   * On the Node: what maintenance changed (the taints it added, whether it cordoned the node) and
   * for which NodeMaintenance, as JSON. Written in the same patch as the taints, so ending the
   * maintenance restores exactly the node's previous taints and schedulability.
   */
  public static final String NODE_STATE_ANNOTATION = "nodemaintenance.capk.cluster.x-k8s.io/state";
}
