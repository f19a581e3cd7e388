package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.List;
import java.util.Optional;

/** Maintenance's live reads (empty: no such object) and its patches of exactly what changes. */
public interface MaintenanceCluster {

  Optional<V1Node> readNode(String name) throws ApiException;

  /** Applies a JSON Patch to the node ({@link NodePatches}); the node as patched. */
  V1Node patchNode(String name, String jsonPatch) throws ApiException;

  Optional<NodeMaintenance> readMaintenance(String name) throws ApiException;

  /** Every NodeMaintenance, from the API server (admission depends on it). */
  List<NodeMaintenance> listMaintenances() throws ApiException;

  /**
   * Adds ({@code add}) our finalizer, false if the object is gone or being deleted; or removes it,
   * true if this call removed it.
   */
  boolean changeFinalizer(String name, boolean add) throws ApiException;

  /** Applies a JSON merge patch to the status subresource. */
  void patchStatus(String name, String mergePatch) throws ApiException;
}
