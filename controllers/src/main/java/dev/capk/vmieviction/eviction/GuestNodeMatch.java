package dev.capk.vmieviction.eviction;

import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeCondition;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;

/**
 * Which guest Node runs inside a VMI. CAPK names the VM's hostname, and so the guest Node, after
 * the VMI; the cloud provider sets {@code spec.providerID} to {@code kubevirt://<vmi-name>}. The
 * VMI's {@code status.evacuationNodeName} is the <em>infra</em> node and is never looked up in the
 * guest cluster. And how ready that Node is. Pure.
 */
public final class GuestNodeMatch {
  private GuestNodeMatch() {}

  public static final String PROVIDER_ID_PREFIX = "kubevirt://";

  public static String providerIdFor(String vmiName) {
    return PROVIDER_ID_PREFIX + vmiName;
  }

  /** The Node named like the VMI; else the Node whose providerID names the VMI; else none. */
  public static Optional<V1Node> choose(String vmiName, Collection<V1Node> nodes) {
    Optional<V1Node> byName = nodes.stream().filter(n -> vmiName.equals(nameOf(n))).findFirst();
    if (byName.isPresent()) {
      return byName;
    }
    return nodes.stream().filter(n -> hasProviderIdOf(n, vmiName)).findFirst();
  }

  public static boolean hasProviderIdOf(V1Node node, String vmiName) {
    return node.getSpec() != null
        && Objects.equals(providerIdFor(vmiName), node.getSpec().getProviderID());
  }

  private static String nameOf(V1Node node) {
    return node.getMetadata() == null ? null : node.getMetadata().getName();
  }

  /** A Node's Ready condition, reduced to what the drain decisions need. */
  public enum NodeReadiness {
    READY,
    NOT_READY,
    /** Ready is Unknown or absent: the node controller lost the kubelet. */
    UNREACHABLE;

    public static NodeReadiness of(V1Node node) {
      if (node.getStatus() == null || node.getStatus().getConditions() == null) {
        return UNREACHABLE;
      }
      for (V1NodeCondition c : node.getStatus().getConditions()) {
        if ("Ready".equals(c.getType())) {
          return switch (String.valueOf(c.getStatus())) {
            case "True" -> READY;
            case "False" -> NOT_READY;
            default -> UNREACHABLE;
          };
        }
      }
      return UNREACHABLE;
    }
  }
}
