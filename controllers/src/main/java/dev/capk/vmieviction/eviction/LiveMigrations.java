package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import io.kubernetes.client.openapi.ApiException;
import java.util.List;

/** The VirtualMachineInstanceMigrations this controller created, in the infra cluster. */
public interface LiveMigrations {

  /** Ours (label-selected), in every namespace: one list request. */
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

  /** For a controller that never migrates: nothing exists, nothing may be created. */
  LiveMigrations NONE =
      new LiveMigrations() {
        @Override
        public List<VirtualMachineInstanceMigration> ours() {
          return List.of();
        }

        @Override
        public boolean create(VirtualMachineInstanceMigration migration) throws ApiException {
          throw new ApiException(403, "live migrations are not wired in this controller");
        }

        @Override
        public void delete(String namespace, String name) {}
      };
}
