package dev.capk.vmieviction.maintenance;

import com.google.gson.JsonArray;
import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.kube.LenientJson;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Taint;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The node patches of a maintenance, pure functions of the node as read: JSON Patches of {@link
 * Cordoner}'s ops, guarded by {@code test}s of what they depend on. Taints, cordon and the record
 * of what we changed (the {@link Mark}) go in one patch, so they cannot disagree after a crash.
 */
public final class NodePatches {
  private NodePatches() {}

  /**
   * What a maintenance changed on a node, kept on the node ({@link
   * NodeMaintenanceApi#NODE_STATE_ANNOTATION}): the taints it added (not those the node had) and
   * whether it cordoned the node. {@code ownerUid}: a namesake created later is another
   * maintenance.
   */
  public record Mark(
      @SerializedName("nodeMaintenance") String owner,
      @SerializedName("uid") String ownerUid,
      List<Taint> addedTaints,
      boolean cordoned) {
    public Mark {
      Objects.requireNonNull(owner, "owner");
      Objects.requireNonNull(ownerUid, "ownerUid");
      addedTaints = addedTaints == null ? List.of() : List.copyOf(addedTaints);
    }

    public String toJson() {
      return Taint.GSON.toJson(this);
    }

    /** The mark, or empty when absent or not ours to understand (edited by hand). */
    static Optional<Mark> parse(String json) {
      try {
        return json == null || json.isBlank()
            ? Optional.empty()
            : Optional.of(Taint.GSON.fromJson(json, Mark.class));
      } catch (RuntimeException e) {
        return Optional.empty();
      }
    }

    /** The mark on {@code node}, if any (a malformed annotation reads as none). */
    public static Optional<Mark> of(V1Node node) {
      return parse(LenientJson.annotation(node, NodeMaintenanceApi.NODE_STATE_ANNOTATION));
    }
  }

  /** Entering maintenance: the patch, the mark it writes, what it changes. */
  public record Entering(String patch, Mark mark, List<Taint> taintsAdded, boolean cordonedNow) {

    /** For the CordonNode event; empty when the patch only rewrites the mark. */
    Optional<String> describe(String name) {
      if (taintsAdded.isEmpty() && !cordonedNow) {
        return Optional.empty();
      }
      StringBuilder s = new StringBuilder("Maintenance ").append(name).append(": ");
      if (!taintsAdded.isEmpty()) {
        s.append("tainted ").append(list(taintsAdded));
      }
      if (cordonedNow) {
        s.append(taintsAdded.isEmpty() ? "" : " and ").append("cordoned");
      } else if (!mark.cordoned()) {
        s.append(taintsAdded.isEmpty() ? "" : "; ")
            .append("already cordoned, stays cordoned when maintenance ends");
      }
      return Optional.of(s.toString());
    }
  }

  /** Leaving maintenance: the patch, what it removes, whether it uncordons. */
  public record Leaving(String patch, List<Taint> taintsRemoved, boolean uncordons) {

    String describe(String name) {
      return "Maintenance "
          + name
          + " ended: "
          + (taintsRemoved.isEmpty()
              ? "no taints to remove"
              : "removed taints " + list(taintsRemoved))
          + (uncordons ? "; uncordoned" : "; left cordoned as it was before maintenance");
    }
  }

  /**
   * Taints and cordons the node for {@code owner}/{@code ownerUid}; empty when it already is so. A
   * taint listed in the mark stays listed; one the node had before the mark is its own. A mark left
   * by another maintenance is taken over, so the node still returns to its state before any.
   */
  public static Optional<Entering> enter(
      V1Node node, List<Taint> wanted, String owner, String ownerUid) {
    Optional<Mark> previous = Mark.of(node);
    Set<Taint> added = new LinkedHashSet<>(previous.map(Mark::addedTaints).orElse(List.of()));
    List<Taint> addedNow =
        wanted.stream().filter(t -> taints(node).stream().noneMatch(t::sameAs)).toList();
    JsonArray newTaints = new JsonArray();
    for (Taint t : addedNow) {
      newTaints.add(t.toJson());
      added.removeIf(t::sameAs);
      added.add(t);
    }
    boolean unschedulable = Cordoner.unschedulable(node);
    // Once recorded, "cordoned before us" is kept even if someone uncordons it meanwhile.
    boolean cordoned = previous.map(Mark::cordoned).orElse(!unschedulable);
    Mark mark = new Mark(owner, ownerUid, new ArrayList<>(added), cordoned);
    if (addedNow.isEmpty() && unschedulable && previous.equals(Optional.of(mark))) {
      return Optional.empty();
    }
    JsonArray ops = Cordoner.unschedulableOps(node, true);
    ops.addAll(Cordoner.taintOps(node, List.of(), newTaints));
    ops.addAll(Cordoner.markOps(node, NodeMaintenanceApi.NODE_STATE_ANNOTATION, mark.toJson()));
    return Optional.of(new Entering(ops.toString(), mark, addedNow, !unschedulable));
  }

  /**
   * Restores the node: removes exactly the taints {@code ownerUid} added, uncordons only if it
   * cordoned, drops the mark. Empty when the node has no mark of it (nothing to restore).
   */
  public static Optional<Leaving> leave(V1Node node, String ownerUid) {
    Optional<Mark> found = Mark.of(node).filter(m -> m.ownerUid().equals(ownerUid));
    if (found.isEmpty()) {
      return Optional.empty();
    }
    Mark mark = found.get();
    List<V1Taint> taints = taints(node);
    List<Integer> remove = new ArrayList<>();
    List<Taint> removed = new ArrayList<>();
    for (int i = 0; i < taints.size(); i++) {
      V1Taint t = taints.get(i);
      Optional<Taint> ours = mark.addedTaints().stream().filter(o -> o.sameAs(t)).findFirst();
      if (ours.isPresent()) {
        removed.add(ours.get());
        remove.add(i);
      }
    }
    boolean uncordon = mark.cordoned() && Cordoner.unschedulable(node);
    JsonArray ops = uncordon ? Cordoner.unschedulableOps(node, false) : new JsonArray();
    ops.addAll(Cordoner.taintOps(node, remove, new JsonArray()));
    ops.addAll(Cordoner.markOps(node, NodeMaintenanceApi.NODE_STATE_ANNOTATION, null));
    return Optional.of(new Leaving(ops.toString(), removed, uncordon));
  }

  static List<V1Taint> taints(V1Node node) {
    List<V1Taint> t = node.getSpec() == null ? null : node.getSpec().getTaints();
    return t == null ? List.of() : t;
  }

  private static String list(List<Taint> taints) {
    return taints.stream().map(Taint::toString).collect(Collectors.joining(", "));
  }
}
