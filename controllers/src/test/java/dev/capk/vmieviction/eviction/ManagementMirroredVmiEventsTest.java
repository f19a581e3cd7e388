package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClusterRef;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Outcomes go to the VMI and to its KubevirtMachine; a refusal to the bound KubevirtClusters. */
class ManagementMirroredVmiEventsTest {

  /** The Events created in the management cluster. */
  static final class Created implements EventStore {
    final List<CoreV1Event> events = new ArrayList<>();

    @Override
    public void create(CoreV1Event event) {
      events.add(event);
    }

    @Override
    public void mergePatch(String namespace, String name, String patch) {}

    @Override
    public CoreV1Event read(String namespace, String name) {
      throw new UnsupportedOperationException();
    }

    @Override
    public String describe(Exception e) {
      return e.getClass().getSimpleName();
    }
  }

  /** The reasons said on the VMI itself. */
  static final class OnVmi implements VmiEvents {
    final List<String> reasons = new ArrayList<>();

    @Override
    public void record(VirtualMachineInstance vmi, boolean warning, String reason, String message) {
      reasons.add(reason);
    }
  }

  static VirtualMachineInstance vmi() {
    VirtualMachineInstance v = new VirtualMachineInstance();
    v.setMetadata(
        new V1ObjectMeta()
            .namespace("vms")
            .name("vm-1")
            .uid("u")
            .labels(Map.of("capk.cluster.x-k8s.io/kubevirt-machine-name", "vm-1")));
    return v;
  }

  @Test
  void outcomesAreRepeatedOnTheKubevirtMachineOthersOnlyOnTheVmi() {
    Created management = new Created();
    OnVmi onVmi = new OnVmi();
    TenantMapping tenants = v -> new GuestClusterRef("tenant-a", "web");
    VmiEvents events =
        VmiEvents.mirrored(
            onVmi,
            new EventSeriesRecorder(
                management, "test", VmiEvents.MIRRORED, Clock.systemUTC(), null, 0),
            tenants,
            List::of,
            "infra Secret tenant-a/infra");

    events.record(vmi(), false, VmiEvents.DRAIN_STARTED, "started");
    events.record(vmi(), false, VmiEvents.CORDONED, "cordoned");
    events.record(vmi(), true, VmiEvents.DRAIN_BLOCKED, "blocked");
    events.record(vmi(), false, VmiEvents.VMI_DELETED, "deleted");

    assertEquals(
        List.of(
            VmiEvents.DRAIN_STARTED,
            VmiEvents.CORDONED,
            VmiEvents.DRAIN_BLOCKED,
            VmiEvents.VMI_DELETED),
        onVmi.reasons);
    assertEquals(
        List.of(VmiEvents.DRAIN_STARTED, VmiEvents.VMI_DELETED),
        management.events.stream().map(CoreV1Event::getReason).toList());
    CoreV1Event deleted = management.events.get(1);
    assertEquals("KubevirtMachine", deleted.getInvolvedObject().getKind());
    assertEquals("tenant-a", deleted.getInvolvedObject().getNamespace());
    assertEquals("vm-1", deleted.getInvolvedObject().getName());
    assertTrue(deleted.getMessage().contains("vms/vm-1"), deleted.getMessage());
  }

  @Test
  void aRefusalGoesToTheBoundKubevirtClustersNotToAMachineTheLabelsName() {
    Created management = new Created();
    TenantMapping refusing =
        v -> {
          throw new GuestAccessException(
              GuestAccessException.Reason.InfraClusterMismatch, "not bound");
        };
    V1ObjectReference kvc =
        new V1ObjectReference().kind("KubevirtCluster").namespace("tenant-a").name("web").uid("k");
    VmiEvents events =
        VmiEvents.mirrored(
            new OnVmi(),
            new EventSeriesRecorder(
                management, "test", VmiEvents.MIRRORED, Clock.systemUTC(), null, 0),
            refusing,
            () -> List.of(kvc),
            "infra Secret tenant-a/infra");

    events.record(vmi(), true, VmiEvents.INFRA_CLUSTER_MISMATCH, "not bound");
    events.record(vmi(), false, VmiEvents.DRAIN_STARTED, "cannot happen, and maps nowhere");

    assertEquals(1, management.events.size());
    assertEquals("KubevirtCluster", management.events.get(0).getInvolvedObject().getKind());
    assertEquals(VmiEvents.INFRA_CLUSTER_MISMATCH, management.events.get(0).getReason());
  }
}
