package dev.capk.vmieviction.drain;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.util.Objects;

/**
 * Marks a node (un)schedulable. Patches {@code spec.unschedulable} only, with a JSON merge patch
 * guarded by the node's resourceVersion: never an update of the whole Node, whose fields our models
 * may not know, and a concurrent change is re-read rather than overwritten.
 */
final class Cordoner {
  private static final int MAX_CONFLICTS = 5;

  private final RawApi api;
  private final CoreV1Api core;

  Cordoner(RawApi api) {
    this.api = api;
    this.core = new CoreV1Api(api.client());
  }

  /**
   * Sets {@code spec.unschedulable} to {@code desired}.
   *
   * @return true if the node changed (in a client dry run: would change)
   * @throws NodeNotFoundException if there is no such node
   */
  boolean setUnschedulable(String node, boolean desired, DryRun dryRun) throws ApiException {
    Objects.requireNonNull(node, "node");
    for (int attempt = 1; ; attempt++) {
      NodeState state = read(node);
      if (state.unschedulable() == desired) {
        return false;
      }
      if (dryRun == DryRun.CLIENT) {
        return true;
      }
      JsonObject spec = new JsonObject();
      // null removes the field, which is how kubectl uncordons (unschedulable is omitempty).
      spec.add(
          "unschedulable",
          desired ? new com.google.gson.JsonPrimitive(true) : com.google.gson.JsonNull.INSTANCE);
      JsonObject meta = new JsonObject();
      meta.addProperty("resourceVersion", state.resourceVersion());
      JsonObject patch = new JsonObject();
      patch.add("metadata", meta);
      patch.add("spec", spec);

      CoreV1Api.APIpatchNodeRequest req = core.patchNode(node, new V1Patch(patch.toString()));
      if (dryRun == DryRun.SERVER) {
        req = req.dryRun("All");
      }
      RawApi.Answer answer = api.execute(RawApi.asMergePatch(api.client(), req.buildCall(null)));
      if (answer.ok()) {
        return true;
      }
      if (answer.code() == 404) {
        throw new NodeNotFoundException(node);
      }
      if (answer.code() == 409 && attempt < MAX_CONFLICTS) {
        continue; // someone else changed the node in between: read it again
      }
      throw answer.toException();
    }
  }

  private record NodeState(boolean unschedulable, String resourceVersion) {}

  private NodeState read(String node) throws ApiException {
    RawApi.Answer answer = api.execute(core.readNode(node).buildCall(null));
    if (answer.code() == 404) {
      throw new NodeNotFoundException(node);
    }
    if (!answer.ok()) {
      throw answer.toException();
    }
    JsonObject o = JsonParser.parseString(answer.body()).getAsJsonObject();
    JsonObject spec =
        o.has("spec") && o.get("spec").isJsonObject()
            ? o.getAsJsonObject("spec")
            : new JsonObject();
    JsonElement u = spec.get("unschedulable");
    boolean unschedulable = u != null && u.isJsonPrimitive() && u.getAsBoolean();
    String rv = o.getAsJsonObject("metadata").get("resourceVersion").getAsString();
    return new NodeState(unschedulable, rv);
  }
}
