package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The guest nodes of one cluster that carry our cordon mark, by name and providerID: what a Running
 * VMI's uncordon check needs to know before it spends a request on its own node. Pure.
 */
public record MarkedNodes(Set<String> names, Set<String> providerIds) {

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
    return new MarkedNodes(marked, providerIds);
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
