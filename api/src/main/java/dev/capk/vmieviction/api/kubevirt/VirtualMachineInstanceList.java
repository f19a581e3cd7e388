package dev.capk.vmieviction.api.kubevirt;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of partial VMIs, as returned by list and used by the informer. */
public class VirtualMachineInstanceList extends ApiObjectList<VirtualMachineInstance> {

  public VirtualMachineInstanceList() {
    super(KubeVirtApi.VMI_KIND + "List");
  }
}
