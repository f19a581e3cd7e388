package dev.capk.vmieviction.maintenance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How the NodeMaintenance controller works.
 *
 * @param taints added to the node in maintenance (besides the cordon), in this order
 * @param passTimeout longest one drain attempt may run (a worker is never held longer); a
 *     NodeMaintenance's spec.evictionTimeout overrides it, up to {@link #MAX_PASS_TIMEOUT}
 * @param retryInterval wait between drain attempts while pods are left
 * @param maxBackoff longest wait after repeated errors (exponential from one second)
 * @param progressInterval shortest interval between two progress writes of one maintenance
 * @param workers concurrent reconciles (maintenances drained at once)
 * @param resync how often every maintenance is looked at again regardless of events
 */
public record NodeMaintenanceSettings(
    List<Taint> taints,
    Duration passTimeout,
    Duration retryInterval,
    Duration maxBackoff,
    Duration progressInterval,
    int workers,
    Duration resync) {

  public static final Duration MAX_PASS_TIMEOUT = Duration.ofMinutes(10);

  public NodeMaintenanceSettings {
    taints = List.copyOf(taints);
    Objects.requireNonNull(passTimeout, "passTimeout");
    Objects.requireNonNull(retryInterval, "retryInterval");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    Objects.requireNonNull(progressInterval, "progressInterval");
    Objects.requireNonNull(resync, "resync");
    if (workers < 1) {
      throw new IllegalArgumentException("workers must be at least 1, got " + workers);
    }
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
  public static java.util.Optional<String> taintProblem(String flag, String drainTaint) {
    try {
      Taint.parse(drainTaint);
      return java.util.Optional.empty();
    } catch (IllegalArgumentException e) {
      return java.util.Optional.of(flag + ": " + e.getMessage());
    }
  }

  /** The Node Maintenance Operator's behaviour: 30 s drain attempts, 5 s apart. */
  public static NodeMaintenanceSettings defaults() {
    return new NodeMaintenanceSettings(
        taints(Taint.MEDIK8S_DRAIN.toString(), false),
        Duration.ofSeconds(30),
        Duration.ofSeconds(5),
        Duration.ofMinutes(2),
        Duration.ofMillis(500),
        2,
        Duration.ofMinutes(10));
  }

  public NodeMaintenanceSettings withTaints(List<Taint> t) {
    return new NodeMaintenanceSettings(
        t, passTimeout, retryInterval, maxBackoff, progressInterval, workers, resync);
  }

  public NodeMaintenanceSettings withPassTimeout(Duration d) {
    return new NodeMaintenanceSettings(
        taints, d, retryInterval, maxBackoff, progressInterval, workers, resync);
  }

  public NodeMaintenanceSettings withRetryInterval(Duration d) {
    return new NodeMaintenanceSettings(
        taints, passTimeout, d, maxBackoff, progressInterval, workers, resync);
  }

  public NodeMaintenanceSettings withWorkers(int n) {
    return new NodeMaintenanceSettings(
        taints, passTimeout, retryInterval, maxBackoff, progressInterval, n, resync);
  }
}
