package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.List;
import java.util.Optional;

/**
 * The reads and writes maintenance makes in the cluster: live reads (never the cache) wherever a
 * decision or a precondition depends on them, and patches of exactly what changes. Reads answer
 * empty for an object that does not exist.
 */
public interface MaintenanceCluster {

  Optional<V1Node> readNode(String name) throws ApiException;

  /** Applies a JSON Patch to the node ({@link NodePatches}); the node as patched. */
  V1Node patchNode(String name, String jsonPatch) throws ApiException;

  Optional<NodeMaintenance> readMaintenance(String name) throws ApiException;

  /** Every NodeMaintenance, read from the API server (not a cache): admission depends on it. */
  List<NodeMaintenance> listMaintenances() throws ApiException;

  /** Adds our finalizer; false if the object is gone or being deleted. */
  boolean addFinalizer(String name) throws ApiException;

  /** Removes our finalizer; true if this call removed it. */
  boolean removeFinalizer(String name) throws ApiException;

  /** Applies a JSON merge patch to the status subresource. */
  void patchStatus(String name, String mergePatch) throws ApiException;
}
