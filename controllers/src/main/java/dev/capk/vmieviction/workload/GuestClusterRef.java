package dev.capk.vmieviction.workload;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import java.util.Map;
import java.util.Optional;

/**
 * The Cluster API Cluster a VMI belongs to: name from {@code cluster.x-k8s.io/cluster-name},
 * namespace from {@code capk.cluster.x-k8s.io/kubevirt-machine-namespace}, else the VMI's own.
 */
public record GuestClusterRef(String namespace, String name) {

  public static Optional<GuestClusterRef> of(VirtualMachineInstance vmi) {
    if (vmi.getMetadata() == null) {
      return Optional.empty();
    }
    Map<String, String> labels = vmi.getMetadata().getLabels();
    String name = labels == null ? null : labels.get(CapkLabels.CLUSTER_NAME);
    if (name == null || name.isBlank()) {
      return Optional.empty();
    }
    String ns = labels.get(CapkLabels.KUBEVIRT_MACHINE_NAMESPACE);
    if (ns == null || ns.isBlank()) {
      ns = vmi.getMetadata().getNamespace();
    }
    return Optional.of(new GuestClusterRef(ns, name));
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
