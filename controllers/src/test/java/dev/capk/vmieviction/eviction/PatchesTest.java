package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.eviction.Guest.DrainPass;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The exact VMI patches sent: only the fields we change, guarded by resourceVersion (the guest
 * node's are drain.CordonerTest's).
 */
class PatchesTest {

  @Test
  void vmiAnnotationPatchCarriesOnlyTheAnnotationAndThePrecondition() {
    assertEquals(
        "{\"metadata\":{\"resourceVersion\":\"42\",\"annotations\":{\"k\":\"v\"}}}",
        InfraVmis.annotationPatch("42", Map.of("k", "v")));
  }

  @Test
  void removingAnAnnotationSendsNull() {
    assertEquals(
        "{\"metadata\":{\"resourceVersion\":\"42\",\"annotations\":{\"k\":null}}}",
        InfraVmis.annotationPatch("42", java.util.Collections.singletonMap("k", null)));
  }

  @Test
  void annotationsChangedTogetherGoInOnePatchInTheirOrder() {
    Map<String, String> changes = new java.util.LinkedHashMap<>();
    changes.put("start", "t");
    changes.put("phase", null);
    assertEquals(
        "{\"metadata\":{\"resourceVersion\":\"42\",\"annotations\":{\"start\":\"t\",\"phase\":null}}}",
        InfraVmis.annotationPatch("42", changes));
  }

  @Test
  void blockersNameTheBudgetsAndPods() {
    DrainPass p =
        DrainPassTest.pass(
            false,
            0,
            2,
            Map.of("ns/db-0", Set.of("ns/db-pdb")),
            List.of(),
            List.of(),
            "s",
            0,
            Optional.empty(),
            Map.of());
    assertTrue(p.blockers().contains("ns/db-pdb"), p.blockers());
    assertTrue(p.blockers().contains("ns/db-0"), p.blockers());
    assertEquals(
        "2 pod(s) still terminating",
        DrainPassTest.pass(
                false, 0, 2, Map.of(), List.of(), List.of(), "s", 0, Optional.empty(), Map.of())
            .blockers());
  }
}
