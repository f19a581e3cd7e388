package dev.capk.vmieviction.api.capk;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of partial {@link KubevirtMachine} objects. */
public class KubevirtMachineList extends ApiObjectList<KubevirtMachine> {

  public KubevirtMachineList() {
    super("KubevirtMachineList");
  }
}
