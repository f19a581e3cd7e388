package dev.capk.vmieviction.maintenance;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a maintenance changed on a node, kept on the node itself (annotation {@link
 * dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi#NODE_STATE_ANNOTATION}) and written in
 * the same patch as the change, so it can never disagree with the node: the taints it added (taints
 * the node already had are not listed, so they stay) and whether it cordoned the node (a node
 * cordoned before stays cordoned afterwards).
 *
 * @param owner the NodeMaintenance's name
 * @param ownerUid the NodeMaintenance's UID: a namesake created later is another maintenance
 */
public record MaintenanceMark(
    String owner, String ownerUid, List<Taint> addedTaints, boolean cordoned) {

  public MaintenanceMark {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(ownerUid, "ownerUid");
    addedTaints = List.copyOf(addedTaints);
  }

  public boolean ownedBy(String uid) {
    return ownerUid.equals(uid);
  }

  public String toJson() {
    JsonObject o = new JsonObject();
    o.addProperty("nodeMaintenance", owner);
    o.addProperty("uid", ownerUid);
    JsonArray taints = new JsonArray();
    addedTaints.forEach(t -> taints.add(t.toJson()));
    o.add("addedTaints", taints);
    o.addProperty("cordoned", cordoned);
    return o.toString();
  }

  /**
   * The mark, or empty when the annotation is absent or not ours to understand (edited by hand).
   */
  public static Optional<MaintenanceMark> parse(String json) {
    if (json == null || json.isBlank()) {
      return Optional.empty();
    }
    try {
      JsonObject o = JsonParser.parseString(json).getAsJsonObject();
      String owner = o.get("nodeMaintenance").getAsString();
      String uid = o.get("uid").getAsString();
      List<Taint> taints = new ArrayList<>();
      JsonElement t = o.get("addedTaints");
      if (t != null && t.isJsonArray()) {
        for (JsonElement e : t.getAsJsonArray()) {
          taints.add(Taint.fromJson(e));
        }
      }
      JsonElement c = o.get("cordoned");
      boolean cordoned = c != null && c.isJsonPrimitive() && c.getAsBoolean();
      return Optional.of(new MaintenanceMark(owner, uid, taints, cordoned));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }
}
