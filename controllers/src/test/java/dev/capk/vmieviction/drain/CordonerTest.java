package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.kube.LenientJson;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeSpec;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The exact node patches sent: only {@code spec.unschedulable} and the mark, guarded by tests of
 * those fields as read (a node's status heartbeats change its resourceVersion), and how a write's
 * answers are sorted.
 */
class CordonerTest {

  private static final String KEY = "capk.cluster.x-k8s.io/vmi-eviction-cordoned-for";
  private static final String MARK = "capk.cluster.x-k8s.io~1vmi-eviction-cordoned-for";

  private static V1Node node(Boolean unschedulable, Map<String, String> annotations) {
    return new V1Node()
        .metadata(new V1ObjectMeta().name("n").resourceVersion("7").annotations(annotations))
        .spec(new V1NodeSpec().unschedulable(unschedulable));
  }

  @Test
  void cordonTestsThatTheNodeIsStillSchedulableAndUnmarkedThenSetsBothInOnePatch() {
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":null},"
            + "{\"op\":\"test\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\",\"value\":null},"
            + "{\"op\":\"add\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\",\"value\":\"uid-1\"},"
            + "{\"op\":\"add\",\"path\":\"/spec/unschedulable\",\"value\":true}]",
        Cordoner.cordonPatch(node(null, Map.of("other", "x")), KEY, "uid-1"));
  }

  /**
   * Every shape in which the server can hold a node without annotations, decoded as the controller
   * decodes answers: the model then shows an empty map (never null) and may show false.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"metadata\":{\"name\":\"n\"},\"spec\":{}}",
        "{\"metadata\":{\"name\":\"n\",\"annotations\":{}},\"spec\":{\"unschedulable\":false}}",
        "{\"metadata\":{\"name\":\"n\",\"annotations\":null}}",
        "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"taints\":[]}}"
      })
  void cordonOfANodeWithoutAnnotationsAddsTheMapWhileItIsStillAbsent(String json) {
    V1Node decoded = LenientJson.GSON.fromJson(JsonParser.parseString(json), V1Node.class);
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":null},"
            + "{\"op\":\"test\",\"path\":\"/metadata/annotations\",\"value\":null},"
            + "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":"
            + "{\"capk.cluster.x-k8s.io/vmi-eviction-cordoned-for\":\"uid-1\"}},"
            + "{\"op\":\"add\",\"path\":\"/spec/unschedulable\",\"value\":true}]",
        Cordoner.cordonPatch(decoded, KEY, "uid-1"));
    // Without a mark, the annotations are not touched at all.
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":null},"
            + "{\"op\":\"add\",\"path\":\"/spec/unschedulable\",\"value\":true}]",
        Cordoner.cordonPatch(decoded, null, null));
  }

  @Test
  void uncordonTestsOurCordonAndMarkThenRemovesBothWithoutAResourceVersion() {
    String patch = Cordoner.uncordonPatch(node(true, Map.of(KEY, "uid-1")), KEY);
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":true},"
            + "{\"op\":\"test\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\",\"value\":\"uid-1\"},"
            + "{\"op\":\"remove\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\"},"
            + "{\"op\":\"remove\",\"path\":\"/spec/unschedulable\"}]",
        patch);
    assertFalse(patch.contains("resourceVersion"), patch);
  }

  @Test
  void anUnmarkedUncordonRemovesTheFieldAsKubectlDoesWhileTheNodeIsStillCordoned() {
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":true},"
            + "{\"op\":\"remove\",\"path\":\"/spec/unschedulable\"}]",
        Cordoner.uncordonPatch(node(true, Map.of()), null));
  }

  @Test
  void removingTheMarkTestsItIsStillTheOneRead() {
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\",\"value\":\"uid-1\"},"
            + "{\"op\":\"remove\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\"}]",
        Cordoner.removeMarkPatch(node(false, Map.of(KEY, "uid-1")), KEY));
  }

  // ---- the ops NodeMaintenance combines.

  @Test
  void unschedulableOpsTestTheFieldAsReadEvenWhenItNeedsNoChange() {
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":null},"
            + "{\"op\":\"add\",\"path\":\"/spec/unschedulable\",\"value\":true}]",
        Cordoner.unschedulableOps(node(false, Map.of()), true).toString());
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":true}]",
        Cordoner.unschedulableOps(node(true, Map.of()), true).toString());
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":true},"
            + "{\"op\":\"remove\",\"path\":\"/spec/unschedulable\"}]",
        Cordoner.unschedulableOps(node(true, Map.of()), false).toString());
  }

  @Test
  void markOpsSetOrRemoveTheMarkWhileItIsAsRead() {
    assertEquals(
        Cordoner.removeMarkPatch(node(true, Map.of(KEY, "a")), KEY),
        Cordoner.markOps(node(true, Map.of(KEY, "a")), KEY, null).toString());
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\",\"value\":\"a\"},{\"op\":\"add\",\"path\":\"/metadata/annotations/"
            + MARK
            + "\",\"value\":\"b\"}]",
        Cordoner.markOps(node(true, Map.of(KEY, "a")), KEY, "b").toString());
  }

  /** Taints of every shape: none (absent or decoded as empty), some, with fields unknown. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"metadata\":{\"name\":\"n\"},\"spec\":{}}",
        "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[]}}",
        "{\"metadata\":{\"name\":\"n\"}}"
      })
  void addingTaintsToANodeWithoutAnyAddsTheListWhileItIsStillAbsent(String json) {
    V1Node decoded = LenientJson.GSON.fromJson(JsonParser.parseString(json), V1Node.class);
    JsonArray add = new JsonArray();
    add.add(JsonParser.parseString("{\"key\":\"a\",\"effect\":\"NoSchedule\"}"));
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/taints\",\"value\":null},"
            + "{\"op\":\"add\",\"path\":\"/spec/taints\",\"value\":"
            + "[{\"key\":\"a\",\"effect\":\"NoSchedule\"}]}]",
        Cordoner.taintOps(decoded, List.of(), add).toString());
  }

  @Test
  void taintsAreRemovedByIndexHighestFirstEachWhileItIsTheOneReadAndAddedAtTheEnd() {
    V1Node decoded =
        LenientJson.GSON.fromJson(
            JsonParser.parseString(
                "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":["
                    + "{\"key\":\"a\",\"effect\":\"NoSchedule\",\"unknown\":1},"
                    + "{\"key\":\"b\",\"effect\":\"NoExecute\"},"
                    + "{\"key\":\"c\",\"effect\":\"NoSchedule\"}]}}"),
            V1Node.class);
    JsonArray add = new JsonArray();
    add.add(JsonParser.parseString("{\"key\":\"d\",\"effect\":\"NoSchedule\"}"));
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/taints/2/key\",\"value\":\"c\"},"
            + "{\"op\":\"test\",\"path\":\"/spec/taints/2/effect\",\"value\":\"NoSchedule\"},"
            + "{\"op\":\"remove\",\"path\":\"/spec/taints/2\"},"
            + "{\"op\":\"test\",\"path\":\"/spec/taints/0/key\",\"value\":\"a\"},"
            + "{\"op\":\"test\",\"path\":\"/spec/taints/0/effect\",\"value\":\"NoSchedule\"},"
            + "{\"op\":\"remove\",\"path\":\"/spec/taints/0\"},"
            + "{\"op\":\"add\",\"path\":\"/spec/taints/-\",\"value\":"
            + "{\"key\":\"d\",\"effect\":\"NoSchedule\"}}]",
        Cordoner.taintOps(decoded, List.of(0, 2), add).toString());
  }

  // ---- write: how a patch's answers are sorted.

  /** One attempt of a cordon, whose patch is answered {@code answer}. */
  private static Cordoner.Written<String> write(ApiException answer, Optional<V1Node> reread)
      throws ApiException {
    return Cordoner.write(
        node(null, Map.of()),
        n -> Optional.of(Cordoner.cordonPatch(n, null, null)),
        p -> p,
        1,
        (name, patch) -> {
          throw answer;
        },
        name -> reread);
  }

  @Test
  void anAppliedPatchGivesTheNodeAsPatched() throws ApiException {
    V1Node patched = node(true, Map.of());
    List<String> sent = new ArrayList<>();
    Cordoner.Written<String> w =
        Cordoner.write(
            node(null, Map.of()),
            n -> Optional.of(Cordoner.cordonPatch(n, null, null)),
            p -> p,
            1,
            (name, patch) -> {
              sent.add(name + " " + patch);
              return patched;
            },
            name -> {
              throw new AssertionError("no read");
            });
    assertEquals(Cordoner.Result.APPLIED, w.result());
    assertSame(patched, w.node());
    assertFalse(w.reread());
    assertEquals(List.of("n " + Cordoner.cordonPatch(node(null, Map.of()), null, null)), sent);
  }

  @Test
  void aPatchThatDidNotApplyToANodeThatChangedIsAChangeWithTheNodeReadAgain() throws ApiException {
    V1Node cordonedMeanwhile = node(true, Map.of());
    Cordoner.Written<String> w = write(ServerPatches.notApplied(), Optional.of(cordonedMeanwhile));
    assertEquals(Cordoner.Result.CHANGED, w.result());
    assertSame(cordonedMeanwhile, w.node());
    assertTrue(w.reread());
  }

  @Test
  void aPatchThatWouldNotApplyToTheNodeAsItIsNowIsARefusal() throws ApiException {
    Cordoner.Written<String> w =
        write(ServerPatches.notApplied(), Optional.of(node(null, Map.of())));
    assertEquals(Cordoner.Result.REFUSED, w.result());
    assertEquals(422, w.answer().getCode());
  }

  @Test
  void aNodeGoneIsGoneWhetherThePatchOrTheReadSaysSo() throws ApiException {
    assertEquals(
        Cordoner.Result.GONE, write(ServerPatches.notApplied(), Optional.empty()).result());
    assertEquals(
        Cordoner.Result.GONE, write(new ApiException(404, "not found"), Optional.empty()).result());
  }

  @Test
  void aDenialIsARefusalAndAConflictAChangeWithoutARead() throws ApiException {
    Cordoner.Written<String> denied = write(new ApiException(403, "forbidden"), Optional.empty());
    assertEquals(Cordoner.Result.REFUSED, denied.result());
    assertNull(denied.node());
    Cordoner.Written<String> conflict = write(new ApiException(409, "conflict"), Optional.empty());
    assertEquals(Cordoner.Result.CHANGED, conflict.result());
    assertFalse(conflict.reread());
  }

  @Test
  void anAnswerThatSaysNothingAboutTheNodeIsThrown() {
    for (int code : new int[] {0, 429, 500, 503}) {
      ApiException e = new ApiException(code, "x");
      assertSame(e, assertThrows(ApiException.class, () -> write(e, Optional.empty())));
    }
  }

  // ---- the planned write: planned anew from the node read again, a bounded number of times.

  private static Optional<String> cordon(V1Node n) {
    return Boolean.TRUE.equals(n.getSpec().getUnschedulable())
        ? Optional.empty()
        : Optional.of(Cordoner.cordonPatch(n, null, null));
  }

  /** A cordon planned on a schedulable node, whose every patch is answered {@code answer}. */
  private static Cordoner.Written<String> planned(
      ApiException answer, V1Node reread, List<String> sent) throws ApiException {
    return Cordoner.write(
        node(null, Map.of()),
        CordonerTest::cordon,
        p -> p,
        Cordoner.MAX_WRITES,
        (name, patch) -> {
          sent.add(patch);
          throw answer;
        },
        name -> Optional.of(reread));
  }

  @Test
  void aPlannedWriteIsPlannedAnewOnTheNodeReadAgainAndGivesUpAfterMaxWrites() throws ApiException {
    List<String> sent = new ArrayList<>();
    Cordoner.Written<String> w =
        planned(new ApiException(409, "conflict"), node(null, Map.of()), sent);
    assertEquals(Cordoner.Result.CHANGED, w.result());
    assertEquals(Cordoner.MAX_WRITES, sent.size());
  }

  @Test
  void aPlannedWriteThatOthersMadeMeanwhileNeedsNothingMore() throws ApiException {
    List<String> sent = new ArrayList<>();
    Cordoner.Written<String> w = planned(ServerPatches.notApplied(), node(true, Map.of()), sent);
    assertEquals(Cordoner.Result.APPLIED, w.result());
    assertNull(w.change(), "nothing written");
    assertEquals(1, sent.size());
  }

  @Test
  void aPlannedWriteAppliedGivesTheChangeWritten() throws ApiException {
    V1Node read = node(null, Map.of());
    Cordoner.Written<String> w =
        Cordoner.write(
            read,
            CordonerTest::cordon,
            p -> p,
            Cordoner.MAX_WRITES,
            (name, patch) -> node(true, Map.of()),
            name -> {
              throw new AssertionError("no read");
            });
    assertEquals(Cordoner.Result.APPLIED, w.result());
    assertEquals(Cordoner.cordonPatch(read, null, null), w.change());
  }
}
