package dev.capk.vmieviction.drain;

import java.util.Objects;

/**
 * A pod the drain leaves in place, and why (a DaemonSet pod, a mirror pod, a pod not waited
 * for...).
 */
public record SkippedPod(PodRef pod, String reason) {
  public SkippedPod {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(reason, "reason");
  }

  @Override
  public String toString() {
    return pod + " (" + reason + ")";
  }
}
