package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;

/** Events on the NodeMaintenance and on its Node, for {@code kubectl describe}. */
public interface MaintenanceEvents {

  void onMaintenance(NodeMaintenance nm, boolean warning, String reason, String message);

  void onNode(String nodeName, String nodeUid, boolean warning, String reason, String message);
}
