package dev.capk.vmieviction.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.JSON;
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
}
