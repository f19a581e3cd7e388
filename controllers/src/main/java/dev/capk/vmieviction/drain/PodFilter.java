package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1Pod;

/**
 * Decides about one pod of the node being drained. Extra filters given in {@link DrainOptions} run
 * after kubectl's built-in ones, and only for pods those would delete.
 */
@FunctionalInterface
public interface PodFilter {
  PodVerdict verdict(V1Pod pod);
}
