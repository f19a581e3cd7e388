package dev.capk.vmieviction.api.capi;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of partial {@link Machine} objects. */
public class MachineList extends ApiObjectList<Machine> {

  public MachineList() {
    super("MachineList");
  }
}
