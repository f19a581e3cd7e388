package dev.capk.vmieviction.workload;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.kube.LenientJson;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which tenant Cluster a VMI belongs to, and so whose kubeconfig Secret, Machines and
 * KubevirtMachines its evacuation may reach: {@link #local} in the controller's own cluster, the
 * infra package's bound Clusters for an external infra cluster.
 */
@FunctionalInterface
public interface TenantMapping {

  /** The Cluster of a VMI; a GuestAccessException (safe to publish) when it may not reach it. */
  GuestClusterRef clusterOf(VirtualMachineInstance vmi) throws GuestAccessException;

  /**
   * Why the VMI is not one of ours at all, or empty when it is. A refused VMI is never drained,
   * annotated or deleted, not even at a deadline: its labels claim a tenant that the management
   * objects do not bind to where it runs. Local mode refuses none (there the deadline holds for
   * every VMI the label selector picks).
   */
  default Optional<String> refusal(VirtualMachineInstance vmi) {
    return Optional.empty();
  }

  /**
   * The local mapping. Anyone allowed to create a VMI in namespace A can set any label on it: were
   * the label {@code capk.cluster.x-k8s.io/kubevirt-machine-namespace} trusted, a VMI in A could
   * make the controller drain the nodes of the tenant in namespace B. So the Cluster is the one
   * named by {@code cluster.x-k8s.io/cluster-name} in the VMI's own namespace; another namespace is
   * honoured only when the operator allowed it, for all VMIs or for named pairs.
   *
   * @param allowAny {@code --allow-cross-namespace-clusters}
   * @param pairs {@code --cross-namespace-cluster} entries, {@code VMI_NAMESPACE=CLUSTER_NAMESPACE}
   * @throws IllegalArgumentException naming the first malformed entry
   */
  static TenantMapping local(boolean allowAny, List<String> pairs) {
    Map<String, Set<String>> allowed = new HashMap<>();
    for (String pair : pairs) {
      String[] fromTo = pair.split("=", -1);
      if (fromTo.length != 2 || fromTo[0].isBlank() || fromTo[1].isBlank()) {
        throw new IllegalArgumentException(
            "expected VMI_NAMESPACE=CLUSTER_NAMESPACE, got \"" + pair + "\"");
      }
      allowed.computeIfAbsent(fromTo[0].trim(), k -> new HashSet<>()).add(fromTo[1].trim());
    }
    return vmi -> {
      String name = LenientJson.label(vmi, CapkLabels.CLUSTER_NAME);
      if (name == null || name.isBlank()) {
        throw new GuestAccessException(
            GuestAccessException.Reason.MissingClusterLabel,
            "VMI has no label " + CapkLabels.CLUSTER_NAME + ": its guest cluster is unknown");
      }
      String own = vmi.getMetadata().getNamespace();
      String named = LenientJson.label(vmi, CapkLabels.KUBEVIRT_MACHINE_NAMESPACE);
      if (named == null || named.isBlank() || named.equals(own)) {
        return new GuestClusterRef(own, name);
      }
      if (allowAny || allowed.getOrDefault(own, Set.of()).contains(named)) {
        return new GuestClusterRef(named, name);
      }
      throw new GuestAccessException(
          GuestAccessException.Reason.ClusterNamespaceRefused,
          ("VMI in namespace %s names Cluster %s/%s through label %s: a Cluster in another"
                  + " namespace is not used unless the operator allows it"
                  + " (--cross-namespace-cluster=%1$s=%2$s or --allow-cross-namespace-clusters)")
              .formatted(own, named, name, CapkLabels.KUBEVIRT_MACHINE_NAMESPACE));
    };
  }
}
