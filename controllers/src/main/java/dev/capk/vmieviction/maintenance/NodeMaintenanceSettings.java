package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.time.GoDuration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How the NodeMaintenance controller works.
 *
 * @param taints added to the node in maintenance (besides the cordon), in this order
 * @param passTimeout bound of one drain step's eviction requests; a NodeMaintenance's
 *     spec.evictionTimeout overrides it, up to {@link #MAX_PASS_TIMEOUT}
 * @param retryInterval first wait before a refused eviction is tried again (kubectl's 5 s),
 *     doubling up to {@code maxRetryInterval}
 * @param maxBackoff longest wait after repeated errors
 * @param progressInterval how long a pod leaving waits to wake the next step (a burst, one step)
 * @param resync how often every maintenance is looked at again regardless of events
 * @param maxRetryInterval longest wait between two evictions of a refused pod, and between two
 *     steps of a drain that only waits for pods to go
 */
public record NodeMaintenanceSettings(
    List<Taint> taints,
    Duration passTimeout,
    Duration retryInterval,
    Duration maxBackoff,
    Duration progressInterval,
    int workers,
    Duration resync,
    Duration maxRetryInterval) {

  public static final Duration MAX_PASS_TIMEOUT = Duration.ofMinutes(10);

  public NodeMaintenanceSettings {
    taints = List.copyOf(taints);
    if (workers < 1) {
      throw new IllegalArgumentException("workers must be at least 1, got " + workers);
    }
  }

  /** spec.evictionTimeout when set and positive (capped), else {@link #passTimeout()}. */
  public Duration passTimeout(NodeMaintenance nm) {
    try {
      Duration d =
          GoDuration.parse(nm.getSpec() == null ? null : nm.getSpec().getEvictionTimeout());
      if (!d.isZero()) {
        return d.compareTo(MAX_PASS_TIMEOUT) > 0 ? MAX_PASS_TIMEOUT : d;
      }
    } catch (IllegalArgumentException e) {
      // None set; or a bad value the CRD's pattern keeps out, but an old object may still carry.
    }
    return passTimeout;
  }

  /**
   * The taints of a maintenance: the API's unschedulable taint, the drain taint, and KubeVirt's
   * legacy drain taint when asked.
   *
   * @param drainTaint {@code key[=value]:Effect}, e.g. {@code medik8s.io/drain:NoSchedule}
   * @throws IllegalArgumentException if the drain taint is malformed
   */
  public static List<Taint> taints(String drainTaint, boolean kubevirtDrainTaint) {
    List<Taint> out = new ArrayList<>();
    out.add(Taint.UNSCHEDULABLE);
    Taint drain = Taint.parse(drainTaint);
    if (!drain.sameAs(Taint.UNSCHEDULABLE)) {
      out.add(drain);
    }
    if (kubevirtDrainTaint && out.stream().noneMatch(Taint.KUBEVIRT_DRAIN::sameAs)) {
      out.add(Taint.KUBEVIRT_DRAIN);
    }
    return out;
  }

  /** For flag validation: what is wrong with a drain taint flag's value, if anything. */
  public static Optional<String> taintProblem(String flag, String drainTaint) {
    try {
      Taint.parse(drainTaint);
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.of(flag + ": " + e.getMessage());
    }
  }

  /**
   * Close to the Node Maintenance Operator's behaviour (refused evictions tried again after 5 s),
   * without its cost: a refusal that repeats is tried less often, at most 20 s apart.
   */
  public static NodeMaintenanceSettings defaults() {
    return defaults(taints(Taint.MEDIK8S_DRAIN.toString(), false));
  }

  public static NodeMaintenanceSettings defaults(List<Taint> taints) {
    return new NodeMaintenanceSettings(
        taints,
        Duration.ofSeconds(30),
        Duration.ofSeconds(5),
        Duration.ofMinutes(2),
        Duration.ofMillis(500),
        2,
        Duration.ofMinutes(10),
        Duration.ofSeconds(20));
  }
}
