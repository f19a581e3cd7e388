package dev.capk.vmieviction.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.kubevirt.KubeVirtList;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import io.kubernetes.client.openapi.JSON;
import org.junit.jupiter.api.Test;

/** The partial models read what we need from real-shaped JSON and ignore the rest. */
class ModelsTest {

  static final String VMI =
      """
      {"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
       "metadata":{"name":"vm-1","namespace":"ns","uid":"u-1",
                   "labels":{"capk.cluster.x-k8s.io/kubevirt-machine-name":"vm-1"}},
       "spec":{"evictionStrategy":"External","domain":{"cpu":{"cores":2}},"someFutureField":{"x":1}},
       "status":{"phase":"Running","nodeName":"infra-1","evacuationNodeName":"infra-1",
                 "interfaces":[{"ipAddress":"10.0.0.1"}],"migrationState":{"completed":false}}}
      """;

  @Test
  void vmiReadsTheFieldsTheControllerUsesAndIgnoresTheRest() {
    VirtualMachineInstance vmi = new JSON().deserialize(VMI, VirtualMachineInstance.class);
    assertEquals("vm-1", vmi.getMetadata().getName());
    assertEquals("External", vmi.getSpec().getEvictionStrategy());
    assertEquals("infra-1", vmi.getStatus().getEvacuationNodeName());
    assertEquals("Running", vmi.getStatus().getPhase());
  }

  @Test
  void missingApiVersionAndKindDefaultToTheVmis() {
    VirtualMachineInstance vmi =
        new JSON().deserialize("{\"metadata\":{\"name\":\"a\"}}", VirtualMachineInstance.class);
    assertEquals("kubevirt.io/v1", vmi.getApiVersion());
    assertEquals("VirtualMachineInstance", vmi.getKind());
    assertNull(vmi.getStatus());
  }

  @Test
  void kubeVirtCrGivesTheClusterWideEvictionStrategy() {
    KubeVirtList list =
        new JSON()
            .deserialize(
                """
        {"items":[{"metadata":{"name":"kubevirt","namespace":"kubevirt"},
                   "spec":{"configuration":{"evictionStrategy":"External","developerConfiguration":{}}}}]}
        """,
                KubeVirtList.class);
    assertEquals(
        "External", list.getItems().get(0).getSpec().getConfiguration().getEvictionStrategy());
  }

  @Test
  void aVmiListReadsTypedItemsThroughTheGenericListBase() {
    dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList list =
        new JSON()
            .deserialize(
                """
        {"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstanceList","metadata":{"resourceVersion":"42"},
         "items":[{"metadata":{"name":"a"},"status":{"evacuationNodeName":"infra-1"}},{"metadata":{"name":"b"}}]}
        """,
                dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList.class);
    assertEquals("42", list.getMetadata().getResourceVersion());
    assertEquals(2, list.getItems().size());
    VirtualMachineInstance first = list.getItems().get(0);
    assertEquals("a", first.getMetadata().getName());
    assertEquals("infra-1", first.getStatus().getEvacuationNodeName());
    assertEquals(
        "VirtualMachineInstanceList",
        new dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList().getKind());
  }

  @Test
  void kubeconfigSecretIsNamedAfterTheCluster() {
    assertEquals("tenant-a-kubeconfig", ClusterApi.kubeconfigSecretName("tenant-a"));
  }

  @Test
  void clusterApiAndCapkModelsReadPauseDrainTimeoutsOwnerAndGraceTime() {
    JSON json = new JSON();
    dev.capk.vmieviction.api.capi.Cluster cluster =
        json.deserialize(
            "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"paused\":true,\"topology\":{}}}",
            dev.capk.vmieviction.api.capi.Cluster.class);
    assertEquals(Boolean.TRUE, cluster.getSpec().getPaused());
    dev.capk.vmieviction.api.capi.Machine v1beta1 =
        json.deserialize(
            "{\"metadata\":{\"name\":\"m\"},\"spec\":{\"nodeDrainTimeout\":\"5m\",\"bootstrap\":{}}}",
            dev.capk.vmieviction.api.capi.Machine.class);
    assertEquals("5m", v1beta1.getSpec().getNodeDrainTimeout());
    dev.capk.vmieviction.api.capi.Machine v1beta2 =
        json.deserialize(
            "{\"spec\":{\"deletion\":{\"nodeDrainTimeoutSeconds\":90}}}",
            dev.capk.vmieviction.api.capi.Machine.class);
    assertEquals(90L, v1beta2.getSpec().getDeletion().getNodeDrainTimeoutSeconds());
    dev.capk.vmieviction.api.capk.KubevirtMachine kvm =
        json.deserialize(
            """
            {"metadata":{"name":"k","annotations":{"capk.cluster.x-k8s.io/vmi-deletion-grace-time":"2025-03-01T12:03:00Z"},
             "ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Machine","name":"m","uid":"u"}]},
             "spec":{"virtualMachineTemplate":{}}}
            """,
            dev.capk.vmieviction.api.capk.KubevirtMachine.class);
    assertEquals("m", kvm.getMetadata().getOwnerReferences().get(0).getName());
    assertEquals(
        "2025-03-01T12:03:00Z",
        kvm.getMetadata().getAnnotations().get(EvictionAnnotations.CAPK_DELETION_GRACE_TIME));
  }

  @Test
  void aMigrationJustCreatedHasNoPhaseAndIsNotFinished() {
    VirtualMachineInstanceMigration created =
        new JSON()
            .deserialize(
                "{\"metadata\":{\"name\":\"m\"},\"spec\":{\"vmiName\":\"vm-1\"}}",
                VirtualMachineInstanceMigration.class);
    assertNull(created.phase());
    assertFalse(created.finished()); // counted as running: it takes a slot of KubeVirt's limits
    VirtualMachineInstanceMigration running =
        new JSON()
            .deserialize(
                "{\"metadata\":{\"name\":\"m\"},\"status\":{\"phase\":\"Running\"}}",
                VirtualMachineInstanceMigration.class);
    assertFalse(running.finished());
    VirtualMachineInstanceMigration failed =
        new JSON()
            .deserialize(
                "{\"metadata\":{\"name\":\"m\"},\"status\":{\"phase\":\"Failed\"}}",
                VirtualMachineInstanceMigration.class);
    assertTrue(failed.finished());
  }
}
