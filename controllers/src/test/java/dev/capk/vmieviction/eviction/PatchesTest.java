package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.events.EventSeriesRecorder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The exact JSON merge patches sent: only the fields we change, guarded by resourceVersion. */
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

  @Test
  void cordonSetsUnschedulableAndOurMarkInOnePatch() {
    assertEquals(
        "{\"metadata\":{\"resourceVersion\":\"7\",\"annotations\":{\"capk.cluster.x-k8s.io/vmi-eviction-cordoned-for\":\"uid-1\"}},"
            + "\"spec\":{\"unschedulable\":true}}",
        GuestNodeDrainer.nodePatch("7", true, "uid-1"));
  }

  @Test
  void uncordonClearsUnschedulableAndRemovesOurMark() {
    assertEquals(
        "{\"metadata\":{\"resourceVersion\":\"8\",\"annotations\":{\"capk.cluster.x-k8s.io/vmi-eviction-cordoned-for\":null}},"
            + "\"spec\":{\"unschedulable\":null}}",
        GuestNodeDrainer.nodePatch("8", false, null));
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
