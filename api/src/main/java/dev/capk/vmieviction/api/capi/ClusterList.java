package dev.capk.vmieviction.api.capi;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of partial {@link Cluster} objects. */
public class ClusterList extends ApiObjectList<Cluster> {

  public ClusterList() {
    super("ClusterList");
  }
}
