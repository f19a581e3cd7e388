package dev.capk.vmieviction.infra;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClusterRef;
import dev.capk.vmieviction.workload.TenantMapping;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The tenant mapping of the VMIs seen through one infra connection in one infra namespace: a VMI
 * belongs only to a Cluster of a KubevirtCluster bound there; its labels ({@code
 * cluster.x-k8s.io/cluster-name}, {@code capk.cluster.x-k8s.io/kubevirt-machine-namespace}) only
 * choose among those, and a VMI whose labels choose not exactly one is refused: not ours.
 * Thread-safe; no I/O.
 */
public final class BoundTenants implements TenantMapping {

  private final String where;
  private volatile InfraBindings.Bound bound;

  /**
   * @param where how messages name the infra connection and namespace (never the kubeconfig)
   */
  public BoundTenants(String where, InfraBindings.Bound bound) {
    this.where = where;
    this.bound = bound;
  }

  public void rebind(InfraBindings.Bound bound) {
    this.bound = bound;
  }

  /** The Clusters bound, and the KubevirtClusters that bind them (where problems are told). */
  public InfraBindings.Bound bound() {
    return bound;
  }

  @Override
  public GuestClusterRef clusterOf(VirtualMachineInstance vmi) throws GuestAccessException {
    Map<String, String> labels = vmi.getMetadata() == null ? null : vmi.getMetadata().getLabels();
    String name = labels == null ? null : labels.get(CapkLabels.CLUSTER_NAME);
    String namespace = labels == null ? null : labels.get(CapkLabels.KUBEVIRT_MACHINE_NAMESPACE);
    Set<GuestClusterRef> now = bound.clusters();
    if (name == null || name.isBlank()) {
      throw new GuestAccessException(
          GuestAccessException.Reason.InfraClusterMismatch,
          "VMI has no label %s: it cannot be matched to a Cluster bound to %s (%s); left alone"
              .formatted(CapkLabels.CLUSTER_NAME, where, describe(now)));
    }
    boolean anyNamespace = namespace == null || namespace.isBlank();
    List<GuestClusterRef> matches =
        now.stream()
            .filter(c -> c.name().equals(name))
            .filter(c -> anyNamespace || c.namespace().equals(namespace))
            .toList();
    if (matches.size() == 1) {
      return matches.get(0);
    }
    String why =
        matches.isEmpty()
            ? "which no KubevirtCluster binds to"
            : "which is ambiguous (no label %s) among the Clusters bound to"
                .formatted(CapkLabels.KUBEVIRT_MACHINE_NAMESPACE);
    throw new GuestAccessException(
        GuestAccessException.Reason.InfraClusterMismatch,
        "VMI labels name Cluster %s%s, %s %s (%s); never drained nor deleted by this controller"
            .formatted(anyNamespace ? "" : namespace + "/", name, why, where, describe(now)));
  }

  @Override
  public Optional<String> refusal(VirtualMachineInstance vmi) {
    try {
      clusterOf(vmi);
      return Optional.empty();
    } catch (GuestAccessException e) {
      return Optional.of(e.getMessage());
    }
  }

  private static String describe(Set<GuestClusterRef> clusters) {
    if (clusters.isEmpty()) {
      return "none bound";
    }
    return "bound: "
        + String.join(", ", clusters.stream().map(GuestClusterRef::toString).sorted().toList());
  }
}
