package dev.capk.vmieviction.api.kubevirt;

import dev.capk.vmieviction.api.ApiObjectList;

/** A list of partial VirtualMachineInstanceMigrations. */
public class VirtualMachineInstanceMigrationList
    extends ApiObjectList<VirtualMachineInstanceMigration> {

  public VirtualMachineInstanceMigrationList() {
    super(KubeVirtApi.MIGRATION_KIND + "List");
  }
}
