package dev.capk.vmieviction.api.capk;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of partial {@link KubevirtCluster} objects. */
public class KubevirtClusterList extends ApiObjectList<KubevirtCluster> {

  public KubevirtClusterList() {
    super("KubevirtClusterList");
  }
}
