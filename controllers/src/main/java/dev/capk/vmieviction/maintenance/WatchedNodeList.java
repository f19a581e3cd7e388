package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of {@link WatchedNode}s, for the informer's list calls. */
public class WatchedNodeList extends ApiObjectList<WatchedNode> {

  public WatchedNodeList() {
    super("NodeList");
  }
}
