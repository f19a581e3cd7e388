package dev.capk.vmieviction.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.drain.ServerPatches;
import dev.capk.vmieviction.kube.LenientJson;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

  /** The node as the controller decodes it. */
  static V1Node view(JsonObject node) {
    return LenientJson.GSON.fromJson(node, V1Node.class);
  }

  /** The patch applied as the API server applies it. */
  static JsonObject apply(JsonObject target, String patch) {
    try {
      return ServerPatches.jsonPatch(target, patch);
    } catch (ApiException e) {
      throw new AssertionError("patch did not apply: " + patch + " to " + target, e);
    }
  }

  static List<String> taintStrings(JsonObject node) {
    JsonElement t = node.getAsJsonObject("spec").get("taints");
    List<String> out = new ArrayList<>();
    if (t != null) {
      t.getAsJsonArray().forEach(e -> out.add(Taint.GSON.fromJson(e, Taint.class).toString()));
    }
    return out;
  }

  static Optional<NodePatches.Mark> mark(JsonObject node) {
    return NodePatches.Mark.of(view(node));
  }

  @Test
  void enteringASchedulableNodeAddsBothTaintsCordonsAndRecordsItInOnePatchWithTheResourceVersion() {
    JsonObject before = node(false, "[" + OTHER_TAINT + "]", null);
    NodePatches.Entering e = NodePatches.enter(view(before), WANTED, "nm-a", "uid-a").orElseThrow();
    assertFalse(e.patch().contains("resourceVersion"), "guarded by tests, not the version");
    assertEquals(WANTED, e.taintsAdded());
    assertTrue(e.cordonedNow());
    assertTrue(e.mark().cordoned());
    JsonObject after = apply(before, e.patch());
    assertTrue(after.getAsJsonObject("spec").get("unschedulable").getAsBoolean());
    assertEquals(
        List.of(
            "dedicated=gpu:NoSchedule",
            "node.kubernetes.io/unschedulable:NoSchedule",
            "medik8s.io/drain:NoSchedule"),
        taintStrings(after));
    assertEquals(Optional.of(e.mark()), mark(after));
    assertEquals(
        before.get("status"), after.get("status"), "never touches what it does not change");
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
    assertEquals(Optional.empty(), mark(after));
    assertFalse(after.getAsJsonObject("metadata").has("annotations"), "none, as before");
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
    // Someone removed the drain taint by hand.
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
    NodePatches.Mark m =
        new NodePatches.Mark(
            "nm", "u", List.of(Taint.parse("a=b:NoExecute"), Taint.MEDIK8S_DRAIN), true);
    assertEquals(Optional.of(m), NodePatches.Mark.parse(m.toJson()));
    assertEquals(Optional.empty(), NodePatches.Mark.parse("{\"uid\":1}"));
    assertEquals(Optional.empty(), NodePatches.Mark.parse("[]"));
    assertEquals(Optional.empty(), NodePatches.Mark.parse(null));
  }

  /**
   * Every shape the API allows, decoded as the controller decodes answers (the model shows absent
   * maps and lists as empty, absent unschedulable as false): entering applies, keeps fields of
   * other taints the model does not know, and leaving restores the node exactly.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"metadata\":{\"name\":\"n\"},\"spec\":{}}",
        "{\"metadata\":{\"name\":\"n\",\"annotations\":{}},\"spec\":{\"unschedulable\":false}}",
        "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"a\":\"b\"}},\"spec\":{\"taints\":[]}}",
        "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[{\"key\":\"foreign\","
            + "\"effect\":\"NoSchedule\",\"future\":{\"x\":1}}]}}",
        "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"unschedulable\":true,\"taints\":["
            + "{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\"}]}}"
      })
  void enteringAndLeavingHoldForEveryShapeAndRestoreItExactly(String json) {
    JsonObject before = JsonParser.parseString(json).getAsJsonObject();
    JsonObject during =
        apply(before, NodePatches.enter(view(before), WANTED, "nm", "uid").orElseThrow().patch());
    assertTrue(taintStrings(during).contains("medik8s.io/drain:NoSchedule"), during.toString());
    assertTrue(during.getAsJsonObject("spec").get("unschedulable").getAsBoolean());
    if (json.contains("future")) {
      assertEquals(
          "{\"x\":1}",
          during
              .getAsJsonObject("spec")
              .getAsJsonArray("taints")
              .get(0)
              .getAsJsonObject()
              .get("future")
              .toString(),
          "a field the model does not know is kept");
    }
    JsonObject after = apply(during, NodePatches.leave(view(during), "uid").orElseThrow().patch());
    assertEquals(apply(before, "[]"), after);
  }

  @Test
  void aPatchDoesNotApplyOnceTheNodeChangedInWhatItDependsOn() {
    JsonObject before = node(false, "[" + OTHER_TAINT + "]", null);
    String entering = NodePatches.enter(view(before), WANTED, "nm", "uid").orElseThrow().patch();
    JsonObject cordoned = before.deepCopy();
    cordoned.getAsJsonObject("spec").addProperty("unschedulable", true);
    assertThrows(ApiException.class, () -> ServerPatches.jsonPatch(cordoned, entering));

    JsonObject during = apply(before, entering);
    String leaving = NodePatches.leave(view(during), "uid").orElseThrow().patch();
    // Someone inserts a taint in front: the indices read no longer name our taints.
    JsonObject shifted = during.deepCopy();
    JsonArray taints = new JsonArray();
    taints.add(Taint.parse("first:NoExecute").toJson());
    taints.addAll(shifted.getAsJsonObject("spec").getAsJsonArray("taints"));
    shifted.getAsJsonObject("spec").add("taints", taints);
    assertThrows(ApiException.class, () -> ServerPatches.jsonPatch(shifted, leaving));
    // Built again from the node as it is now, it applies and keeps their taint.
    JsonObject after =
        apply(shifted, NodePatches.leave(view(shifted), "uid").orElseThrow().patch());
    assertEquals(List.of("first:NoExecute", "dedicated=gpu:NoSchedule"), taintStrings(after));
  }
}
