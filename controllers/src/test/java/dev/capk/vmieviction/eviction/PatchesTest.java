package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.kube.LenientJson;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeSpec;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The exact patches sent: only the fields we change, guarded by resourceVersion (VMIs) or by tests
 * of those fields as read (guest nodes, whose status heartbeats change their resourceVersion).
 */
class PatchesTest {

  @Test
  void vmiAnnotationPatchCarriesOnlyTheAnnotationAndThePrecondition() {
    assertEquals(
        "{\"metadata\":{\"resourceVersion\":\"42\",\"annotations\":{\"k\":\"v\"}}}",
        ApiInfraVmis.annotationPatch("42", "k", "v"));
  }

  @Test
  void removingAnAnnotationSendsNull() {
    assertEquals(
        "{\"metadata\":{\"resourceVersion\":\"42\",\"annotations\":{\"k\":null}}}",
        ApiInfraVmis.annotationPatch("42", "k", null));
  }

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
        GuestNodeDrainer.cordonPatch(node(null, Map.of("other", "x")), "uid-1"));
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
    V1Node decoded = LenientJson.parse(JsonParser.parseString(json), V1Node.class);
    assertEquals(
        "[{\"op\":\"test\",\"path\":\"/spec/unschedulable\",\"value\":null},"
            + "{\"op\":\"test\",\"path\":\"/metadata/annotations\",\"value\":null},"
            + "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":"
            + "{\"capk.cluster.x-k8s.io/vmi-eviction-cordoned-for\":\"uid-1\"}},"
            + "{\"op\":\"add\",\"path\":\"/spec/unschedulable\",\"value\":true}]",
        GuestNodeDrainer.cordonPatch(decoded, "uid-1"));
  }

  @Test
  void uncordonTestsOurCordonAndMarkThenRemovesBothWithoutAResourceVersion() {
    String patch =
        GuestNodeDrainer.uncordonPatch(
            node(true, Map.of("capk.cluster.x-k8s.io/vmi-eviction-cordoned-for", "uid-1")));
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
    assertTrue(!patch.contains("resourceVersion"), patch);
  }

  @Test
  void blockersNameTheBudgetsAndPods() {
    DrainPass p =
        new DrainPass(
            false, 0, 2, Map.of("ns/db-0", Set.of("ns/db-pdb")), List.of(), List.of(), "s");
    assertTrue(p.blockers().contains("ns/db-pdb"), p.blockers());
    assertTrue(p.blockers().contains("ns/db-0"), p.blockers());
    assertEquals(
        "2 pod(s) still terminating",
        new DrainPass(false, 0, 2, Map.of(), List.of(), List.of(), "s").blockers());
  }

  @Test
  void eventMessagesAreCutToTheApiLimit() {
    String longMessage = "x".repeat(5000);
    assertEquals(
        EventSeriesRecorder.MAX_MESSAGE, EventSeriesRecorder.truncate(longMessage).length());
  }
}
