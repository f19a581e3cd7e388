package dev.capk.vmieviction.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import org.junit.jupiter.api.Test;

class LenientJsonTest {

  @Test
  void installingKeepsTheClientsDynamicObjectsReadableInTheSameProcess() {
    // Another user of the client in this process built its dynamic API first (as the KubeVirt
    // stand-in does before an in-process controller starts): no request is sent.
    new DynamicKubernetesApi("kubevirt.io", "v1", "virtualmachineinstances", new ApiClient());
    LenientJson.install();

    DynamicKubernetesObject vmi =
        JSON.getGson()
            .fromJson(
                "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
                    + "\"metadata\":{\"name\":\"vm-0\",\"uid\":\"u-1\"}}",
                DynamicKubernetesObject.class);

    assertNotNull(vmi.getMetadata(), "the dynamic object kept its metadata");
    assertEquals("u-1", vmi.getMetadata().getUid());
  }

  @Test
  void managedFieldsNodeImagesAndContainersAreSkippedWhileEverythingElseIsRead() throws Exception {
    V1Pod pod =
        LenientJson.parse(
            "{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\"},"
                + "\"managedFields\":[{\"manager\":\"kube-controller-manager\","
                + "\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{}}}}],"
                + "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\"}]},"
                + "\"spec\":{\"nodeName\":\"n1\","
                + "\"containers\":[{\"name\":\"web\",\"image\":\"nginx\"}],"
                + "\"initContainers\":[{\"name\":\"init\",\"image\":\"busybox\"}],"
                + "\"volumes\":[{\"name\":\"scratch\",\"emptyDir\":{}}]},"
                + "\"status\":{\"phase\":\"Running\","
                + "\"containerStatuses\":[{\"name\":\"web\",\"ready\":true}],"
                + "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
            V1Pod.class);
    // Left as the model starts it (null or empty): not read.
    assertTrue(isEmpty(pod.getMetadata().getManagedFields()));
    assertTrue(isEmpty(pod.getSpec().getContainers()));
    assertTrue(isEmpty(pod.getSpec().getInitContainers()));
    assertTrue(isEmpty(pod.getStatus().getContainerStatuses()));
    assertEquals("web", pod.getMetadata().getLabels().get("app"));
    assertEquals("rs", pod.getMetadata().getOwnerReferences().get(0).getName());
    assertEquals("n1", pod.getSpec().getNodeName());
    assertNotNull(pod.getSpec().getVolumes().get(0).getEmptyDir(), "what the drain filters read");
    assertEquals("Running", pod.getStatus().getPhase());
    assertEquals("Ready", pod.getStatus().getConditions().get(0).getType());

    V1Node node =
        LenientJson.parse(
            "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"unschedulable\":true},"
                + "\"status\":{\"images\":[{\"names\":[\"x\"],\"sizeBytes\":1}],"
                + "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
            V1Node.class);
    assertTrue(isEmpty(node.getStatus().getImages()));
    assertEquals("Ready", node.getStatus().getConditions().get(0).getType());
    assertEquals(Boolean.TRUE, node.getSpec().getUnschedulable());
  }

  private static boolean isEmpty(java.util.List<?> list) {
    return list == null || list.isEmpty();
  }
}
