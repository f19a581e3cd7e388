package dev.capk.vmieviction.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodePatchesTest {
  static final List<Taint> WANTED = List.of(Taint.UNSCHEDULABLE, Taint.MEDIK8S_DRAIN);
  static final String OTHER_TAINT =
      "{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}";

  /** A node as the API returns it: name, uid, resourceVersion, cordon, taints, our annotation. */
  static JsonObject node(boolean unschedulable, String taintsJson, String mark) {
    JsonObject meta =
        JsonParser.parseString("{\"name\":\"n1\",\"uid\":\"node-uid\",\"resourceVersion\":\"42\"}")
            .getAsJsonObject();
    if (mark != null) {
      JsonObject a = new JsonObject();
      a.addProperty(NodeMaintenanceApi.NODE_STATE_ANNOTATION, mark);
      meta.add("annotations", a);
    }
    JsonObject spec = new JsonObject();
    if (unschedulable) {
      spec.addProperty("unschedulable", true);
    }
    if (taintsJson != null) {
      spec.add("taints", JsonParser.parseString(taintsJson));
    }
    JsonObject n = new JsonObject();
    n.add("metadata", meta);
    n.add("spec", spec);
    n.add("status", JsonParser.parseString("{\"images\":[{\"names\":[\"x\"]}]}"));
    return n;
  }

  /** Applies a merge patch the way the API server does (RFC 7386), enough for these objects. */
  static JsonObject apply(JsonObject target, String patch) {
    return merge(target.deepCopy(), JsonParser.parseString(patch).getAsJsonObject());
  }

  private static JsonObject merge(JsonObject target, JsonObject patch) {
    for (var e : patch.entrySet()) {
      JsonElement v = e.getValue();
      if (v.isJsonNull()) {
        target.remove(e.getKey());
      } else if (v.isJsonObject()
          && target.has(e.getKey())
          && target.get(e.getKey()).isJsonObject()) {
        merge(target.getAsJsonObject(e.getKey()), v.getAsJsonObject());
      } else if (v.isJsonObject()) {
        target.add(e.getKey(), merge(new JsonObject(), v.getAsJsonObject()));
      } else {
        target.add(e.getKey(), v.deepCopy());
      }
    }
    return target;
  }

  static NodeView view(JsonObject node) {
    return NodeView.of(node);
  }

  @Test
  void enteringASchedulableNodeAddsBothTaintsCordonsAndRecordsItInOnePatchWithTheResourceVersion() {
    JsonObject before = node(false, "[" + OTHER_TAINT + "]", null);
    NodePatches.Entering e = NodePatches.enter(view(before), WANTED, "nm-a", "uid-a").orElseThrow();
    JsonObject patch = JsonParser.parseString(e.patch()).getAsJsonObject();
    assertEquals("42", patch.getAsJsonObject("metadata").get("resourceVersion").getAsString());
    assertEquals(WANTED, e.taintsAdded());
    assertTrue(e.cordonedNow());
    assertTrue(e.mark().cordoned());
    JsonObject after = apply(before, e.patch());
    NodeView v = view(after);
    assertTrue(v.unschedulable());
    assertEquals(
        List.of(
            "dedicated=gpu:NoSchedule",
            "node.kubernetes.io/unschedulable:NoSchedule",
            "medik8s.io/drain:NoSchedule"),
        v.taintStrings());
    assertEquals(Optional.of(e.mark()), v.mark());
    assertFalse(patch.has("status"), "never touches what it does not change");
  }

  @Test
  void enteringTwiceChangesNothingTheSecondTime() {
    JsonObject before = node(false, null, null);
    JsonObject after =
        apply(
            before, NodePatches.enter(view(before), WANTED, "nm-a", "uid-a").orElseThrow().patch());
    assertEquals(Optional.empty(), NodePatches.enter(view(after), WANTED, "nm-a", "uid-a"));
  }

  @Test
  void leavingRestoresTheNodeExactlyKeepingOtherTaintsAndTheirFields() {
    String withTime =
        "{\"key\":\"example.com/x\",\"effect\":\"NoExecute\",\"timeAdded\":\"2024-01-01T00:00:00Z\"}";
    JsonObject before = node(false, "[" + OTHER_TAINT + "," + withTime + "]", null);
    JsonObject during =
        apply(
            before, NodePatches.enter(view(before), WANTED, "nm-a", "uid-a").orElseThrow().patch());
    NodePatches.Leaving l = NodePatches.leave(view(during), "uid-a").orElseThrow();
    assertTrue(l.uncordons());
    assertEquals(WANTED, l.taintsRemoved());
    JsonObject after = apply(during, l.patch());
    assertEquals(before.getAsJsonObject("spec"), after.getAsJsonObject("spec"));
    assertEquals(Optional.empty(), view(after).mark());
    assertFalse(
        after
            .getAsJsonObject("metadata")
            .getAsJsonObject("annotations")
            .has(NodeMaintenanceApi.NODE_STATE_ANNOTATION));
  }

  @Test
  void aNodeCordonedBeforeMaintenanceStaysCordonedAndKeepsTheTaintItAlreadyHad() {
    // The node lifecycle controller taints a cordoned node node.kubernetes.io/unschedulable.
    JsonObject before =
        node(
            true,
            "[{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\","
                + "\"timeAdded\":\"2024-01-01T00:00:00Z\"}]",
            null);
    NodePatches.Entering e = NodePatches.enter(view(before), WANTED, "nm-a", "uid-a").orElseThrow();
    assertEquals(List.of(Taint.MEDIK8S_DRAIN), e.taintsAdded());
    assertFalse(e.cordonedNow());
    assertFalse(e.mark().cordoned());
    JsonObject during = apply(before, e.patch());
    NodePatches.Leaving l = NodePatches.leave(view(during), "uid-a").orElseThrow();
    assertFalse(l.uncordons());
    assertEquals(List.of(Taint.MEDIK8S_DRAIN), l.taintsRemoved());
    JsonObject after = apply(during, l.patch());
    assertEquals(before.getAsJsonObject("spec"), after.getAsJsonObject("spec"));
  }

  @Test
  void aTaintRemovedByHandDuringMaintenanceIsPutBackAndStillCountsAsOurs() {
    JsonObject before = node(false, null, null);
    JsonObject during =
        apply(
            before, NodePatches.enter(view(before), WANTED, "nm-a", "uid-a").orElseThrow().patch());
    JsonArray onlyUnschedulable = new JsonArray();
    onlyUnschedulable.add(Taint.UNSCHEDULABLE.toJson());
    during.getAsJsonObject("spec").add("taints", onlyUnschedulable);
    during.getAsJsonObject("spec").remove("unschedulable"); // someone uncordoned it, too
    NodePatches.Entering again =
        NodePatches.enter(view(during), WANTED, "nm-a", "uid-a").orElseThrow();
    assertEquals(List.of(Taint.MEDIK8S_DRAIN), again.taintsAdded());
    assertTrue(again.cordonedNow());
    assertTrue(again.mark().cordoned(), "we cordoned it first");
    JsonObject after =
        apply(
            apply(during, again.patch()),
            NodePatches.leave(view(apply(during, again.patch())), "uid-a").orElseThrow().patch());
    assertEquals(before.getAsJsonObject("spec"), after.getAsJsonObject("spec"));
  }

  @Test
  void aPreCordonedNodeUncordonedByHandIsCordonedAgainButStillLeftCordonedAtTheEnd() {
    JsonObject before = node(true, null, null);
    JsonObject during =
        apply(
            before, NodePatches.enter(view(before), WANTED, "nm-a", "uid-a").orElseThrow().patch());
    during.getAsJsonObject("spec").remove("unschedulable");
    NodePatches.Entering again =
        NodePatches.enter(view(during), WANTED, "nm-a", "uid-a").orElseThrow();
    assertTrue(again.cordonedNow());
    assertFalse(again.mark().cordoned(), "the node was cordoned before maintenance");
    JsonObject mid = apply(during, again.patch());
    assertFalse(NodePatches.leave(view(mid), "uid-a").orElseThrow().uncordons());
  }

  @Test
  void leavingTouchesNothingWithoutAMarkOfThisMaintenance() {
    JsonObject plain = node(true, "[" + OTHER_TAINT + "]", null);
    assertEquals(Optional.empty(), NodePatches.leave(view(plain), "uid-a"));
    JsonObject other =
        apply(
            node(false, null, null),
            NodePatches.enter(view(node(false, null, null)), WANTED, "nm-b", "uid-b")
                .orElseThrow()
                .patch());
    assertEquals(Optional.empty(), NodePatches.leave(view(other), "uid-a"));
    JsonObject garbled = node(true, null, "not json");
    assertEquals(Optional.empty(), NodePatches.leave(view(garbled), "uid-a"));
  }

  @Test
  void aMarkLeftByAnotherMaintenanceIsTakenOverSoTheNodeStillReturnsToItsOriginalState() {
    JsonObject original = node(false, null, null);
    JsonObject leftover =
        apply(
            original,
            NodePatches.enter(view(original), WANTED, "nm-old", "uid-old").orElseThrow().patch());
    NodePatches.Entering e =
        NodePatches.enter(view(leftover), WANTED, "nm-new", "uid-new").orElseThrow();
    assertEquals(List.of(), e.taintsAdded());
    assertEquals("uid-new", e.mark().ownerUid());
    assertTrue(e.mark().cordoned());
    assertEquals(WANTED, e.mark().addedTaints());
    JsonObject during = apply(leftover, e.patch());
    JsonObject after =
        apply(during, NodePatches.leave(view(during), "uid-new").orElseThrow().patch());
    assertEquals(original.getAsJsonObject("spec"), after.getAsJsonObject("spec"));
  }

  @Test
  void theMarkRoundTripsAndAGarbledOneReadsAsNone() {
    MaintenanceMark m =
        new MaintenanceMark(
            "nm", "u", List.of(Taint.parse("a=b:NoExecute"), Taint.MEDIK8S_DRAIN), true);
    assertEquals(Optional.of(m), MaintenanceMark.parse(m.toJson()));
    assertEquals(Optional.empty(), MaintenanceMark.parse("{\"uid\":1}"));
    assertEquals(Optional.empty(), MaintenanceMark.parse("[]"));
    assertEquals(Optional.empty(), MaintenanceMark.parse(null));
  }
}
