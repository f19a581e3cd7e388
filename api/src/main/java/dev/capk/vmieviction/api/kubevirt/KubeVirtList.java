package dev.capk.vmieviction.api.kubevirt;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of partial {@link KubeVirt} objects. */
public class KubeVirtList extends ApiObjectList<KubeVirt> {

  public KubeVirtList() {
    super("KubeVirtList");
  }
}
