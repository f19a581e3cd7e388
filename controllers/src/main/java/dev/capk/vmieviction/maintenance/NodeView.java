package dev.capk.vmieviction.maintenance;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import java.util.Optional;

/**
 * The parts of a Node that maintenance reads, from the API's JSON as is: taints stay raw JSON so
 * fields we do not model (timeAdded, future ones) are written back untouched.
 */
public record NodeView(
    String name,
    String uid,
    String resourceVersion,
    boolean unschedulable,
    JsonArray taints,
    String rawMark) {

  public NodeView {
    taints = taints == null ? new JsonArray() : taints.deepCopy();
  }

  public static NodeView of(JsonObject node) {
    JsonObject meta = object(node, "metadata");
    JsonObject spec = object(node, "spec");
    JsonElement u = spec.get("unschedulable");
    JsonElement t = spec.get("taints");
    JsonObject annotations = object(meta, "annotations");
    return new NodeView(
        text(meta, "name"),
        text(meta, "uid"),
        text(meta, "resourceVersion"),
        u != null && u.isJsonPrimitive() && u.getAsBoolean(),
        t != null && t.isJsonArray() ? t.getAsJsonArray() : new JsonArray(),
        text(annotations, NodeMaintenanceApi.NODE_STATE_ANNOTATION));
  }

  /**
   * What a maintenance recorded on this node, if anything (a malformed annotation reads as none).
   */
  public Optional<MaintenanceMark> mark() {
    return MaintenanceMark.parse(rawMark);
  }

  public boolean hasTaint(Taint taint) {
    for (JsonElement e : taints) {
      if (taint.sameAs(e)) {
        return true;
      }
    }
    return false;
  }

  /** The taints as {@code key[=value]:Effect}, for messages and tests. */
  public java.util.List<String> taintStrings() {
    java.util.List<String> out = new java.util.ArrayList<>();
    for (JsonElement e : taints) {
      try {
        out.add(Taint.fromJson(e).toString());
      } catch (IllegalArgumentException ex) {
        out.add(e.toString());
      }
    }
    return out;
  }

  private static JsonObject object(JsonObject o, String field) {
    JsonElement e = o == null ? null : o.get(field);
    return e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
  }

  private static String text(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonPrimitive() ? e.getAsString() : null;
  }
}
