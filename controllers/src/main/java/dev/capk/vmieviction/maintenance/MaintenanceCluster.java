package dev.capk.vmieviction.maintenance;

import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.FINALIZER;
import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.GROUP;
import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.PLURAL;
import static dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi.VERSION;

import com.google.gson.JsonObject;
import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceList;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.kube.RawApi.Answer;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import okhttp3.Call;

/**
 * Maintenance's live reads (empty: no such object) and its patches of exactly what changes, over
 * the official client's API classes, answers read leniently ({@link RawApi}): a field a newer API
 * server adds to Node cannot break maintenance. Not final: the reconciler's unit test replaces it.
 */
public class MaintenanceCluster {
  private static final int MAX_CONFLICTS = 5;

  private final RawApi api;
  private final Cordoner nodes;
  private final CustomObjectsApi custom;

  public MaintenanceCluster(ApiClient client) {
    this.api = new RawApi(client);
    this.nodes = new Cordoner(api);
    this.custom = new CustomObjectsApi(client);
  }

  public Optional<V1Node> readNode(String name) throws ApiException {
    return nodes.read(name);
  }

  /** Applies a JSON Patch to the node ({@link NodePatches}); the node as patched. */
  public V1Node patchNode(String name, String jsonPatch) throws ApiException {
    return nodes.patch(name, jsonPatch, DryRun.NONE);
  }

  public Optional<NodeMaintenance> readMaintenance(String name) throws ApiException {
    Answer a =
        api.execute(custom.getClusterCustomObject(GROUP, VERSION, PLURAL, name).buildCall(null));
    return a.code() == 404
        ? Optional.empty()
        : Optional.ofNullable(LenientJson.parse(a.orThrow().body(), NodeMaintenance.class));
  }

  /** Every NodeMaintenance, from the API server (admission depends on it). */
  public List<NodeMaintenance> listMaintenances() throws ApiException {
    NodeMaintenanceList list =
        api.get(
            custom.listClusterCustomObject(GROUP, VERSION, PLURAL).buildCall(null),
            NodeMaintenanceList.class);
    return list == null || list.getItems() == null ? List.of() : list.getItems();
  }

  /**
   * Adds ({@code add}) our finalizer, false if the object is gone or being deleted; or removes it,
   * true if this call removed it. The list is replaced whole, so the patch carries the
   * resourceVersion it was read at (a conflict: read again).
   */
  public boolean changeFinalizer(String name, boolean add) throws ApiException {
    for (int attempt = 1; ; attempt++) {
      Optional<NodeMaintenance> read = readMaintenance(name);
      if (read.isEmpty()) {
        return false;
      }
      V1ObjectMeta meta = read.get().getMetadata();
      List<String> had = meta.getFinalizers() == null ? List.of() : meta.getFinalizers();
      boolean has = had.contains(FINALIZER);
      if (add ? has || meta.getDeletionTimestamp() != null : !has) {
        return add && meta.getDeletionTimestamp() == null;
      }
      List<String> finalizers =
          add
              ? Stream.concat(had.stream(), Stream.of(FINALIZER)).toList()
              : had.stream().filter(f -> !f.equals(FINALIZER)).toList();
      JsonObject m = new JsonObject();
      m.addProperty("resourceVersion", meta.getResourceVersion());
      m.add("finalizers", LenientJson.GSON.toJsonTree(finalizers.isEmpty() ? null : finalizers));
      var patch = new V1Patch("{\"metadata\":" + m + "}");
      Call call =
          custom.patchClusterCustomObject(GROUP, VERSION, PLURAL, name, patch).buildCall(null);
      Answer a = api.execute(RawApi.asMergePatch(api.client(), call));
      if (a.code() == 409 && attempt < MAX_CONFLICTS) {
        continue;
      }
      if (a.code() == 404) {
        return false;
      }
      a.orThrow();
      return true;
    }
  }

  public void patchStatus(String name, String mergePatch) throws ApiException {
    Call call =
        custom
            .patchClusterCustomObjectStatus(GROUP, VERSION, PLURAL, name, new V1Patch(mergePatch))
            .buildCall(null);
    api.execute(RawApi.asMergePatch(api.client(), call)).orThrow();
  }
}
