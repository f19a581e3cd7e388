package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import io.kubernetes.client.openapi.ApiException;
import java.util.List;

/** The VirtualMachineInstanceMigrations this controller created, in the infra cluster. */
public interface LiveMigrations {

  /** Ours (label-selected), in every namespace. */
  List<VirtualMachineInstanceMigration> ours() throws ApiException;

  /**
   * Creates {@code migration}; one of that name existing already counts as created (a restart or
   * another replica got there first).
   *
   * @return false when it existed already
   */
  boolean create(VirtualMachineInstanceMigration migration) throws ApiException;

  /** Deletes it; already gone counts as deleted. */
  void delete(String namespace, String name) throws ApiException;
}
