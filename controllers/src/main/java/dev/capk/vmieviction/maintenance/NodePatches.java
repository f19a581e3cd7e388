package dev.capk.vmieviction.maintenance;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The node patches of a maintenance, as pure functions of the node as read. Each is one JSON merge
 * patch carrying the node's resourceVersion: the whole taint list is written (a merge patch cannot
 * edit a list item), so the precondition makes the API server refuse it (409) if anyone changed the
 * node since we read it, instead of losing their taint edit. Taints, cordon and the record of what
 * we changed go in the same patch, so they cannot disagree after a crash.
 */
public final class NodePatches {
  private NodePatches() {}

  /** Entering maintenance: the patch, and the mark it writes. */
  public record Entering(
      String patch, MaintenanceMark mark, List<Taint> taintsAdded, boolean cordonedNow) {}

  /** Leaving maintenance: the patch, what it removes, and whether it uncordons. */
  public record Leaving(String patch, List<Taint> taintsRemoved, boolean uncordons) {}

  /**
   * Taints and cordons the node for the maintenance {@code owner}/{@code ownerUid}. Empty when the
   * node already is as wanted.
   *
   * <p>What counts as "added by maintenance" survives restarts and reads again: a taint listed in
   * the node's mark stays listed; a taint the node had before the mark existed is the node's own. A
   * mark left by another maintenance (the node was never restored, e.g. its annotation edited) is
   * taken over, so the node still returns to its state before any maintenance.
   */
  public static Optional<Entering> enter(
      NodeView node, List<Taint> wanted, String owner, String ownerUid) {
    Optional<MaintenanceMark> previous = node.mark();
    Set<Taint> added = new LinkedHashSet<>();
    previous.ifPresent(m -> added.addAll(m.addedTaints()));
    JsonArray taints = node.taints().deepCopy();
    List<Taint> addedNow = new ArrayList<>();
    for (Taint t : wanted) {
      if (!node.hasTaint(t)) {
        taints.add(t.toJson());
        addedNow.add(t);
        added.removeIf(t::sameAs);
        added.add(t);
      }
    }
    // Once recorded, "the node was cordoned before us" is kept even if someone uncordons it
    // meanwhile.
    boolean cordoned = previous.map(MaintenanceMark::cordoned).orElse(!node.unschedulable());
    MaintenanceMark mark = new MaintenanceMark(owner, ownerUid, new ArrayList<>(added), cordoned);
    boolean cordonNow = !node.unschedulable();
    boolean markChanged = previous.isEmpty() || !previous.get().equals(mark);
    if (addedNow.isEmpty() && !cordonNow && !markChanged) {
      return Optional.empty();
    }
    JsonObject spec = new JsonObject();
    if (!addedNow.isEmpty()) {
      spec.add("taints", taints);
    }
    if (cordonNow) {
      spec.add("unschedulable", new JsonPrimitive(true));
    }
    JsonObject annotations = new JsonObject();
    annotations.addProperty(NodeMaintenanceApi.NODE_STATE_ANNOTATION, mark.toJson());
    return Optional.of(new Entering(patch(node, annotations, spec), mark, addedNow, cordonNow));
  }

  /**
   * Restores the node from the maintenance {@code ownerUid}: removes exactly the taints it added,
   * uncordons only if it cordoned, and drops the mark. Empty when the node carries no mark of this
   * maintenance (nothing was changed, or it was restored already).
   */
  public static Optional<Leaving> leave(NodeView node, String ownerUid) {
    Optional<MaintenanceMark> found = node.mark().filter(m -> m.ownedBy(ownerUid));
    if (found.isEmpty()) {
      return Optional.empty();
    }
    MaintenanceMark mark = found.get();
    JsonArray kept = new JsonArray();
    List<Taint> removed = new ArrayList<>();
    for (JsonElement e : node.taints()) {
      Optional<Taint> ours = mark.addedTaints().stream().filter(t -> t.sameAs(e)).findFirst();
      if (ours.isPresent()) {
        removed.add(ours.get());
      } else {
        kept.add(e.deepCopy());
      }
    }
    boolean uncordon = mark.cordoned() && node.unschedulable();
    JsonObject spec = new JsonObject();
    if (!removed.isEmpty()) {
      // No taints left: remove the field (taints is omitempty, as the node had it before).
      spec.add("taints", kept.isEmpty() ? JsonNull.INSTANCE : kept);
    }
    if (uncordon) {
      // null removes the field, as kubectl uncordon does (unschedulable is omitempty).
      spec.add("unschedulable", JsonNull.INSTANCE);
    }
    JsonObject annotations = new JsonObject();
    annotations.add(NodeMaintenanceApi.NODE_STATE_ANNOTATION, JsonNull.INSTANCE);
    return Optional.of(new Leaving(patch(node, annotations, spec), removed, uncordon));
  }

  private static String patch(NodeView node, JsonObject annotations, JsonObject spec) {
    JsonObject meta = new JsonObject();
    meta.addProperty("resourceVersion", node.resourceVersion());
    meta.add("annotations", annotations);
    JsonObject patch = new JsonObject();
    patch.add("metadata", meta);
    if (spec.size() > 0) {
      patch.add("spec", spec);
    }
    return patch.toString();
  }
}
