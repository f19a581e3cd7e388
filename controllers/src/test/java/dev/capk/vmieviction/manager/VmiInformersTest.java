package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.openapi.models.V1ManagedFieldsEntry;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the VMI cache keeps of a VMI; paging against a real API server is VmiInformersIT's. */
class VmiInformersTest {

  @Test
  void trimmingKeepsExactlyWhatTheControllerReads() {
    VirtualMachineInstance vmi = new VirtualMachineInstance();
    vmi.setMetadata(
        new V1ObjectMeta()
            .name("a")
            .namespace("ns")
            .uid("u")
            .resourceVersion("7")
            .generation(3L)
            .deletionTimestamp(java.time.OffsetDateTime.parse("2025-01-01T00:00:00Z"))
            .putLabelsItem("cluster.x-k8s.io/cluster-name", new String("c"))
            .putLabelsItem("capk.cluster.x-k8s.io/kubevirt-machine-namespace", "tenants")
            .putLabelsItem("capk.cluster.x-k8s.io/kubevirt-machine-name", "kvm-a")
            .putLabelsItem("kubevirt.io/vm", "a")
            .putAnnotationsItem("capk.cluster.x-k8s.io/vmi-drain-start-time", "t")
            .putAnnotationsItem("capk.cluster.x-k8s.io/vmi-deletion-grace-time", "g")
            .putAnnotationsItem("kubevirt.io/latest-observed-api-version", "v1")
            .addFinalizersItem("kubevirt.io/virtualMachineControllerFinalize")
            .addOwnerReferencesItem(
                new io.kubernetes.client.openapi.models.V1OwnerReference()
                    .name("a")
                    .kind("VirtualMachine"))
            .managedFields(List.of(new V1ManagedFieldsEntry().manager("m"))));

    V1ObjectMeta m = VmiInformers.trim(vmi).getMetadata();

    assertEquals(
        List.of("a", "ns", "u", "7"),
        List.of(m.getName(), m.getNamespace(), m.getUid(), m.getResourceVersion()));
    assertEquals(java.time.OffsetDateTime.parse("2025-01-01T00:00:00Z"), m.getDeletionTimestamp());
    assertEquals(
        java.util.Map.of(
            "cluster.x-k8s.io/cluster-name",
            "c",
            "capk.cluster.x-k8s.io/kubevirt-machine-namespace",
            "tenants",
            "capk.cluster.x-k8s.io/kubevirt-machine-name",
            "kvm-a"),
        m.getLabels());
    assertEquals(
        java.util.Map.of(
            "capk.cluster.x-k8s.io/vmi-drain-start-time",
            "t",
            "capk.cluster.x-k8s.io/vmi-deletion-grace-time",
            "g"),
        m.getAnnotations());
    assertTrue(m.getManagedFields() == null || m.getManagedFields().isEmpty());
    assertTrue(m.getFinalizers() == null || m.getFinalizers().isEmpty());
    assertTrue(m.getOwnerReferences() == null || m.getOwnerReferences().isEmpty());
    assertNull(m.getGeneration());
    assertTrue(
        m.getLabels().get("cluster.x-k8s.io/cluster-name") == "c".intern(),
        "cluster names are shared");
  }

  @Test
  void aVmiWithoutLabelsOrAnnotationsStaysWithout() {
    VirtualMachineInstance vmi = new VirtualMachineInstance();
    vmi.setMetadata(new V1ObjectMeta().name("a").namespace("ns").labels(null).annotations(null));
    V1ObjectMeta m = VmiInformers.trim(vmi).getMetadata();
    assertNull(m.getLabels());
    assertNull(m.getAnnotations());
  }
}
