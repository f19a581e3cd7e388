package dev.capk.vmieviction.eviction;

import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeCondition;

/** A Node's Ready condition, reduced to what the drain decisions need. Pure. */
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
        if ("True".equals(c.getStatus())) {
          return READY;
        }
        if ("False".equals(c.getStatus())) {
          return NOT_READY;
        }
        return UNREACHABLE;
      }
    }
    return UNREACHABLE;
  }
}
