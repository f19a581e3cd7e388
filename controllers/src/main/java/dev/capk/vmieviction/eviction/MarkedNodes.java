package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.eviction.GuestNodeMatch.NodeReadiness;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The guest nodes of one cluster that carry our cordon mark, by name and providerID: what a Running
 * VMI's uncordon check needs to know before it spends a request on its own node. With them, from
 * the same list, every node's role, readiness and mark ({@link #nodes}): what the quorum guard
 * ({@link TenantAdmission}) needs. Pure.
 */
public record MarkedNodes(Set<String> names, Set<String> providerIds, List<Node> nodes) {

  /** One guest node as the tenant-safety policy sees it. */
  public record Node(
      String name,
      String providerId,
      boolean controlPlane,
      NodeReadiness readiness,
      boolean marked) {

    /** Is this the guest node of VMI {@code vmiName} (by name, or by providerID)? */
    public boolean runsIn(String vmiName) {
      return name.equals(vmiName) || GuestNodeMatch.providerIdFor(vmiName).equals(providerId);
    }
  }

  public static MarkedNodes of(Collection<V1Node> nodes) {
    Set<String> marked =
        nodes.stream()
            .filter(MarkedNodes::carriesMark)
            .map(n -> n.getMetadata().getName())
            .collect(Collectors.toUnmodifiableSet());
    Set<String> providerIds =
        nodes.stream()
            .filter(MarkedNodes::carriesMark)
            .filter(n -> n.getSpec() != null && n.getSpec().getProviderID() != null)
            .map(n -> n.getSpec().getProviderID())
            .collect(Collectors.toUnmodifiableSet());
    List<Node> all =
        nodes.stream()
            .filter(n -> n.getMetadata() != null && n.getMetadata().getName() != null)
            .map(
                n ->
                    new Node(
                        n.getMetadata().getName(),
                        n.getSpec() == null ? null : n.getSpec().getProviderID(),
                        n.getMetadata().getLabels() != null
                            && n.getMetadata()
                                .getLabels()
                                .containsKey(CapkLabels.NODE_ROLE_CONTROL_PLANE),
                        NodeReadiness.of(n),
                        carriesMark(n)))
            .toList();
    return new MarkedNodes(marked, providerIds, all);
  }

  /** Could the guest node of VMI {@code vmiName} be one of these (by name, or by providerID)? */
  public boolean mayHoldNodeOf(String vmiName) {
    return names.contains(vmiName) || providerIds.contains(GuestNodeMatch.providerIdFor(vmiName));
  }

  private static boolean carriesMark(V1Node node) {
    if (node.getMetadata() == null) {
      return false;
    }
    Map<String, String> annotations = node.getMetadata().getAnnotations();
    return annotations != null && annotations.containsKey(EvictionAnnotations.CORDONED_BY);
  }
}
