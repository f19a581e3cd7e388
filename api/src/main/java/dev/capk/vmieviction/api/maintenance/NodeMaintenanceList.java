package dev.capk.vmieviction.api.maintenance;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of NodeMaintenances, as returned by list and used by the informer. */
public class NodeMaintenanceList extends ApiObjectList<NodeMaintenance> {

  public NodeMaintenanceList() {
    super(NodeMaintenanceApi.KIND + "List");
  }
}
