package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ContainerImage;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1ManagedFieldsEntry;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1NodeSpec;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeWatchTest {

  @Test
  void ourPatchIsServedUntilTheWatchHasPassedTheVersionItWasMadeOver() {
    V1Node read = node("n1", "10", false);
    NodeWatch w = NodeWatch.unstarted("n1", list("9", read));
    assertEquals("10", w.node("n1").orElseThrow().getMetadata().getResourceVersion());

    w.wrote(read, node("n1", "12", true));
    assertEquals("12", w.node("n1").orElseThrow().getMetadata().getResourceVersion(), "our write");
    assertTrue(w.node("n1").orElseThrow().getSpec().getUnschedulable(), "as our write left it");

    w.seen("MODIFIED", node("n1", "13", true));
    assertEquals("13", w.node("n1").orElseThrow().getMetadata().getResourceVersion(), "caught up");
  }

  @Test
  void aRefusedPatchIsReportedOnceSoThatTheNextStepReadsTheNodeFromTheApi() {
    NodeWatch w = NodeWatch.unstarted("a", list("1", node("a", "1", false)));
    assertFalse(w.refusedSince("a"));
    w.refused("a");
    assertTrue(w.refusedSince("a"));
    assertFalse(w.refusedSince("a"), "once");
  }

  @Test
  void aWatchTheGuestIdentityMayNotMakeIsNotCurrentAndNotReplacedAtOnce() {
    NodeWatch w = NodeWatch.unstarted("a", list("1", node("a", "1", false)));
    assertTrue(w.current());
    assertTrue(w.giveUp(new ApiException(403, "forbidden"), 1), "a 403 ends the loop");
    assertFalse(w.current(), "steps read their nodes themselves");
    assertFalse(w.over(), "kept (until idle): not listed and refused again at every step");
  }

  @Test
  void aFailingWatchKeepsTrying() {
    NodeWatch w = NodeWatch.unstarted("a", list("1"));
    assertFalse(w.giveUp(new ApiException(503, "unavailable"), 3));
    assertFalse(w.over());
  }

  @Test
  void aDeletedNodeIsGoneAndOneCreatedAgainUnderItsNameAppears() {
    NodeWatch w = NodeWatch.unstarted("a", list("1", node("a", "1", false)));
    w.seen("DELETED", node("a", "3", false));
    assertTrue(w.node("a").isEmpty());
    w.seen("ADDED", node("a", "4", false));
    assertEquals("4", w.node("a").orElseThrow().getMetadata().getResourceVersion());
  }

  @Test
  void nodesAreKeptWithoutTheirImagesVolumesAndFieldManagers() {
    V1Node big = node("a", "1", false);
    big.getMetadata().setManagedFields(List.of(new V1ManagedFieldsEntry().manager("kubelet")));
    big.setStatus(new V1NodeStatus().images(List.of(new V1ContainerImage().names(List.of("x")))));
    NodeWatch w = NodeWatch.unstarted("a", list("1", big));
    V1Node kept = w.node("a").orElseThrow();
    assertNull(kept.getMetadata().getManagedFields());
    assertNull(kept.getStatus().getImages());
  }

  @Test
  void aWatchThatHasNotListedYetIsNoAnswerAndAStepWaitsForItOnlyBriefly() throws Exception {
    NodeWatch w = NodeWatch.start(new ApiClient().setBasePath("https://127.0.0.1:1"), "c", "x");
    try {
      assertFalse(w.awaitListed(Duration.ofSeconds(5)), "not listed: the step reads itself");
      assertFalse(w.current());
    } finally {
      w.close();
    }
  }

  private static V1NodeList list(String rv, V1Node... nodes) {
    return new V1NodeList().metadata(new V1ListMeta().resourceVersion(rv)).items(List.of(nodes));
  }

  private static V1Node node(String name, String rv, boolean unschedulable) {
    return new V1Node()
        .metadata(new V1ObjectMeta().name(name).resourceVersion(rv))
        .spec(new V1NodeSpec().unschedulable(unschedulable));
  }
}
