package dev.capk.vmieviction.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceSpec;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AdmissionTest {
  static final OffsetDateTime T0 = OffsetDateTime.of(2025, 1, 1, 12, 0, 0, 0, ZoneOffset.UTC);

  static NodeMaintenance nm(String name, String node, int createdSecond) {
    return new NodeMaintenance()
        .metadata(
            new V1ObjectMeta()
                .name(name)
                .uid("uid-" + name)
                .creationTimestamp(T0.plusSeconds(createdSecond)))
        .spec(new NodeMaintenanceSpec().nodeName(node));
  }

  static NodeMaintenance accepted(NodeMaintenance nm) {
    nm.getMetadata().setFinalizers(new ArrayList<>(List.of("other", NodeMaintenanceApi.FINALIZER)));
    return nm;
  }

  static NodeMaintenance failed(NodeMaintenance nm) {
    nm.setStatus(new NodeMaintenanceStatus().phase(NodeMaintenanceApi.PHASE_FAILED));
    return nm;
  }

  @Test
  void aLoneMaintenanceIsAdmitted() {
    NodeMaintenance a = nm("a", "n1", 0);
    assertEquals(Optional.empty(), Admission.precedence(a, List.of(a, nm("b", "n2", -5))));
  }

  @Test
  void theOlderMaintenanceOfANodeWinsAndTheSameSecondIsSettledByName() {
    NodeMaintenance older = nm("z-older", "n1", 0);
    NodeMaintenance newer = nm("a-newer", "n1", 1);
    assertEquals(Optional.of(older), Admission.precedence(newer, List.of(older, newer)));
    assertEquals(Optional.empty(), Admission.precedence(older, List.of(older, newer)));
    NodeMaintenance x = nm("x", "n1", 3);
    NodeMaintenance y = nm("y", "n1", 3);
    assertEquals(Optional.of(x), Admission.precedence(y, List.of(x, y)));
    assertEquals(Optional.empty(), Admission.precedence(x, List.of(x, y)));
  }

  @Test
  void anAcceptedMaintenanceWinsEvenOverAnOlderUndecidedOne() {
    NodeMaintenance old = nm("old", "n1", 0);
    NodeMaintenance owner = accepted(nm("owner", "n1", 1));
    assertEquals(Optional.of(owner), Admission.precedence(old, List.of(old, owner)));
  }

  @Test
  void refusedMaintenancesNeverBlockNorTakeOver() {
    NodeMaintenance refused = failed(nm("refused", "n1", 0));
    NodeMaintenance fresh = nm("fresh", "n1", 10);
    assertTrue(Admission.inert(refused));
    assertEquals(Optional.empty(), Admission.precedence(fresh, List.of(refused, fresh)));
    // An accepted maintenance whose node is gone is Failed too, but still owns the node.
    NodeMaintenance gone = failed(accepted(nm("gone", "n1", 5)));
    assertFalse(Admission.inert(gone));
    assertEquals(Optional.of(gone), Admission.precedence(fresh, List.of(refused, gone, fresh)));
  }

  @Test
  void aMaintenanceDeletedBeforeItWasAcceptedDoesNotBlock() {
    NodeMaintenance deleting = nm("deleting", "n1", 0);
    deleting.getMetadata().setDeletionTimestamp(T0.plusSeconds(20));
    NodeMaintenance fresh = nm("fresh", "n1", 10);
    assertEquals(Optional.empty(), Admission.precedence(fresh, List.of(deleting, fresh)));
    NodeMaintenance ending = accepted(nm("ending", "n1", 0));
    ending.getMetadata().setDeletionTimestamp(T0.plusSeconds(20));
    assertEquals(
        Optional.of(ending),
        Admission.precedence(fresh, List.of(ending, fresh)),
        "its cleanup still runs: the node is not free yet");
  }
}
