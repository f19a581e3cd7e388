package dev.capk.vmieviction.workload;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which namespace a VMI's Cluster API Cluster (and so its tenant's kubeconfig Secret) may be read
 * from. Anyone allowed to create a VMI in namespace A can set any label on it: were the label
 * {@code capk.cluster.x-k8s.io/kubevirt-machine-namespace} trusted, a VMI in A could make the
 * controller drain the nodes of the tenant in namespace B. So by default the Cluster is the one
 * named by {@code cluster.x-k8s.io/cluster-name} in the VMI's own namespace; another namespace is
 * honoured only when the operator allowed it, for all VMIs or for named pairs. Pure.
 *
 * @param allowAny every VMI may name a Cluster in any namespace ({@code
 *     --allow-cross-namespace-clusters})
 * @param allowed VMI namespace to the Cluster namespaces its VMIs may name ({@code
 *     --cross-namespace-cluster})
 */
public record ClusterNamespacePolicy(boolean allowAny, Map<String, Set<String>> allowed)
    implements TenantMapping {

  public ClusterNamespacePolicy {
    allowed = Map.copyOf(allowed);
  }

  /** The default: a VMI's Cluster is in the VMI's own namespace. */
  public static ClusterNamespacePolicy sameNamespaceOnly() {
    return new ClusterNamespacePolicy(false, Map.of());
  }

  /**
   * The policy from the operator's flags.
   *
   * @param pairs {@code VMI_NAMESPACE=CLUSTER_NAMESPACE} entries
   * @throws IllegalArgumentException naming the first malformed entry
   */
  public static ClusterNamespacePolicy of(boolean allowAny, List<String> pairs) {
    Map<String, Set<String>> allowed = new java.util.HashMap<>();
    for (String pair : pairs) {
      int eq = pair.indexOf('=');
      String from = eq < 0 ? "" : pair.substring(0, eq).trim();
      String to = eq < 0 ? "" : pair.substring(eq + 1).trim();
      if (from.isEmpty() || to.isEmpty() || to.contains("=")) {
        throw new IllegalArgumentException(
            "expected VMI_NAMESPACE=CLUSTER_NAMESPACE, got \"" + pair + "\"");
      }
      allowed.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
    }
    return new ClusterNamespacePolicy(allowAny, allowed);
  }

  /**
   * The Cluster of a VMI, if this policy lets the VMI reach it.
   *
   * @throws GuestAccessException {@code MissingClusterLabel} without a cluster name, {@code
   *     ClusterNamespaceRefused} when the VMI names a Cluster in a namespace it may not reach
   */
  @Override
  public GuestClusterRef clusterOf(VirtualMachineInstance vmi) throws GuestAccessException {
    Map<String, String> labels = vmi.getMetadata() == null ? null : vmi.getMetadata().getLabels();
    String name = labels == null ? null : labels.get(CapkLabels.CLUSTER_NAME);
    if (name == null || name.isBlank()) {
      throw new GuestAccessException(
          GuestAccessException.Reason.MissingClusterLabel,
          "VMI has no label " + CapkLabels.CLUSTER_NAME + ": its guest cluster is unknown");
    }
    String own = vmi.getMetadata().getNamespace();
    String named = labels.get(CapkLabels.KUBEVIRT_MACHINE_NAMESPACE);
    if (named == null || named.isBlank() || named.equals(own)) {
      return new GuestClusterRef(own, name);
    }
    if (allowAny || allowed.getOrDefault(own, Set.of()).contains(named)) {
      return new GuestClusterRef(named, name);
    }
    throw new GuestAccessException(
        GuestAccessException.Reason.ClusterNamespaceRefused,
        ("VMI in namespace %s names Cluster %s/%s through label %s: a Cluster in another namespace"
                + " is not used unless the operator allows it (--cross-namespace-cluster=%1$s=%2$s"
                + " or --allow-cross-namespace-clusters)")
            .formatted(own, named, name, CapkLabels.KUBEVIRT_MACHINE_NAMESPACE));
  }
}
