package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.openapi.models.V1ManagedFieldsEntry;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ManagementInformersTest {

  @Test
  void aCachedKubeconfigSecretKeepsItsIdentityVersionAndKubeconfigOnly() {
    io.kubernetes.client.openapi.models.V1Secret secret =
        new io.kubernetes.client.openapi.models.V1Secret()
            .metadata(
                new V1ObjectMeta()
                    .name("tenant-kubeconfig")
                    .namespace("ns")
                    .uid("u1")
                    .resourceVersion("7")
                    .labels(Map.of("cluster.x-k8s.io/cluster-name", "tenant"))
                    .annotations(Map.of("a", "b"))
                    .managedFields(List.of(new V1ManagedFieldsEntry().manager("capi"))))
            .type("cluster.x-k8s.io/secret")
            .data(Map.of("value", new byte[] {1}, "other", new byte[] {2}));

    ManagementInformers.trimSecret(secret);

    assertEquals(
        new V1ObjectMeta().name("tenant-kubeconfig").namespace("ns").uid("u1").resourceVersion("7"),
        secret.getMetadata());
    assertEquals(List.of("value"), List.copyOf(secret.getData().keySet()));
    assertNull(secret.getType());
  }

  @Test
  void aCachedObjectKeepsOnlyTheMetadataItsReadersUse() {
    KubevirtMachine kvm = new KubevirtMachine();
    kvm.setMetadata(
        new V1ObjectMeta()
            .name("m")
            .namespace("ns")
            .uid("u")
            .resourceVersion("7")
            .labels(Map.of("cluster.x-k8s.io/cluster-name", "t"))
            .annotations(
                Map.of(
                    ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION,
                    "",
                    "kubectl.kubernetes.io/last-applied-configuration",
                    "{...}"))
            .managedFields(List.of(new V1ManagedFieldsEntry().manager("capi")))
            .ownerReferences(
                List.of(
                    new V1OwnerReference()
                        .kind("Machine")
                        .apiVersion("cluster.x-k8s.io/v1beta1")
                        .name("owner"))));
    V1ObjectMeta m = ManagementInformers.trim(kvm).getMetadata();
    assertEquals("m", m.getName());
    assertEquals("ns", m.getNamespace());
    assertEquals("7", m.getResourceVersion());
    assertEquals(Map.of(ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION, ""), m.getAnnotations());
    assertEquals("owner", m.getOwnerReferences().get(0).getName());
    assertNull(m.getLabels());
    assertNull(m.getManagedFields());
  }

  @Test
  void vmiTrimmingKeepsExactlyWhatTheControllerReads() {
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

    V1ObjectMeta m = ManagementInformers.trimVmi(vmi).getMetadata();

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
    V1ObjectMeta m = ManagementInformers.trimVmi(vmi).getMetadata();
    assertNull(m.getLabels());
    assertNull(m.getAnnotations());
  }
}
