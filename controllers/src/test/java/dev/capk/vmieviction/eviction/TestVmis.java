package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceSpec;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeCondition;
import io.kubernetes.client.openapi.models.V1NodeSpec;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;

/** Builders of test objects. */
final class TestVmis {
  private TestVmis() {}

  static VirtualMachineInstance vmi(String name, String strategy, String evacuationNode) {
    V1ObjectMeta meta =
        new V1ObjectMeta()
            .namespace("tenant-a")
            .name(name)
            .uid("uid-" + name)
            .resourceVersion("1")
            .labels(
                new HashMap<>(
                    java.util.Map.of(
                        CapkLabels.KUBEVIRT_MACHINE_NAME, name, CapkLabels.CLUSTER_NAME, "guest")))
            .annotations(new HashMap<>());
    return new VirtualMachineInstance()
        .metadata(meta)
        .spec(new VirtualMachineInstanceSpec().evictionStrategy(strategy))
        .status(
            new VirtualMachineInstanceStatus()
                .evacuationNodeName(evacuationNode)
                .phase("Running")
                .nodeName("infra-1"));
  }

  static VirtualMachineInstance deleting(VirtualMachineInstance vmi) {
    vmi.getMetadata().setDeletionTimestamp(OffsetDateTime.parse("2024-01-01T00:00:00Z"));
    return vmi;
  }

  static V1Node node(String name, String providerId, boolean unschedulable, String ready) {
    V1Node n =
        new V1Node()
            .metadata(
                new V1ObjectMeta()
                    .name(name)
                    .uid("node-uid-" + name)
                    .resourceVersion("7")
                    .annotations(new HashMap<>()))
            .spec(
                new V1NodeSpec()
                    .providerID(providerId)
                    .unschedulable(unschedulable ? Boolean.TRUE : null));
    if (ready != null) {
      n.status(
          new V1NodeStatus()
              .conditions(List.of(new V1NodeCondition().type("Ready").status(ready))));
    }
    return n;
  }
}
