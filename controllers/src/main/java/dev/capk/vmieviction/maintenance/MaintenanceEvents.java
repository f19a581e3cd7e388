package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.util.Set;

/**
 * Events on the NodeMaintenance and on its Node (both cluster-scoped: namespace {@code default}, as
 * the kubelet's node events), as series. The first five reasons are the Node Maintenance
 * Operator's, so alerts written for it keep working.
 */
@FunctionalInterface
public interface MaintenanceEvents {
  String BEGIN_MAINTENANCE = "BeginMaintenance";
  String SUCCEED_MAINTENANCE = "SucceedMaintenance";
  String FAILED_MAINTENANCE = "FailedMaintenance";
  String UNCORDON_NODE = "UncordonNode";
  String REMOVED_MAINTENANCE = "RemovedMaintenance";
  String CORDON_NODE = "CordonNode";

  /** An eviction was refused by a budget (or failed). */
  String DRAIN_BLOCKED = "DrainBlocked";

  /** Some pod may not be deleted at all. */
  String DRAIN_REFUSED = "DrainRefused";

  /** Refused: spec.nodeName names no node. */
  String NODE_NOT_FOUND = "NodeNotFound";

  /** Refused: another NodeMaintenance already targets the node. */
  String DUPLICATE_MAINTENANCE = "DuplicateMaintenance";

  /** A request was refused (admission, RBAC, validation), or the node kept changing. */
  String REQUEST_REFUSED = "RequestRefused";

  /** The steps of a maintenance (the recorder's outcomes): none may be lost to a cap or delay. */
  Set<String> OUTCOMES =
      Set.of(
          BEGIN_MAINTENANCE,
          CORDON_NODE,
          SUCCEED_MAINTENANCE,
          FAILED_MAINTENANCE,
          UNCORDON_NODE,
          REMOVED_MAINTENANCE);

  void record(V1ObjectReference ref, boolean warning, String reason, String message);

  default void onMaintenance(NodeMaintenance nm, boolean warning, String reason, String message) {
    var m = nm.getMetadata();
    var ref = new V1ObjectReference().apiVersion(nm.getApiVersion()).kind(nm.getKind());
    record(ref.name(m.getName()).uid(m.getUid()), warning, reason, message);
  }

  default void onNode(V1Node node, boolean warning, String reason, String message) {
    var m = node.getMetadata();
    var ref = new V1ObjectReference().apiVersion("v1").kind("Node");
    record(ref.name(m.getName()).uid(m.getUid()), warning, reason, message);
  }
}
