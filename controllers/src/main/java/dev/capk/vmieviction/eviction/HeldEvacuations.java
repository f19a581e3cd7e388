package dev.capk.vmieviction.eviction;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The VMIs the admit step holds, by tenant Cluster ({@code namespace/cluster}), so that what ends a
 * hold wakes them at once instead of at their next look (up to {@code --drain-retry-interval}
 * later): an admitted VMI of the Cluster gone (a worker's slot, or the control plane's turn, freed)
 * and a guest node of the Cluster uncordoned after its evacuation (a control-plane member back and
 * Ready). A woken VMI is only looked at again: the admit step decides, as on any look.
 *
 * <p>What this process has not seen (a hold recorded by another replica, a node back Ready without
 * our cordon) is still found by the held VMI's own next look.
 */
final class HeldEvacuations {

  private final Consumer<String> wake;

  /** Held VMIs ({@code namespace/name}) by Cluster. */
  private final Map<String, Set<String>> heldByCluster = new ConcurrentHashMap<>();

  /** The Cluster of each VMI held or admitted, until it is gone or its evacuation ends. */
  private final Map<String, String> clusterOf = new ConcurrentHashMap<>();

  /**
   * @param wake enqueues a VMI (by {@code namespace/name}) for its next step
   */
  HeldEvacuations(Consumer<String> wake) {
    this.wake = wake;
  }

  static String clusterKey(String namespace, String cluster) {
    return namespace + "/" + cluster;
  }

  /** The admit step held {@code vmiKey}. */
  void held(String vmiKey, String cluster) {
    clusterOf.put(vmiKey, cluster);
    heldByCluster.compute(
        cluster,
        (k, held) -> {
          Set<String> s = held == null ? ConcurrentHashMap.newKeySet() : held;
          s.add(vmiKey);
          return s;
        });
  }

  /** The admit step let {@code vmiKey} go ahead: its end may free what holds others. */
  void admitted(String vmiKey, String cluster) {
    clusterOf.put(vmiKey, cluster);
    forgetHeld(vmiKey, cluster);
  }

  /**
   * {@code vmiKey} is gone, or under this name runs a VMI that is not being evacuated (its
   * recreation, or KubeVirt called the evacuation off): wake the VMIs held in its Cluster.
   */
  void ended(String vmiKey) {
    String cluster = clusterOf.remove(vmiKey);
    if (cluster != null) {
      forgetHeld(vmiKey, cluster);
      wakeHeldIn(cluster);
    }
  }

  /** A guest node of {@code cluster} came back from its evacuation (uncordoned, Ready). */
  void nodeBack(String cluster) {
    wakeHeldIn(cluster);
  }

  private void wakeHeldIn(String cluster) {
    Set<String> held = heldByCluster.get(cluster);
    if (held != null) {
      held.forEach(wake);
    }
  }

  private void forgetHeld(String vmiKey, String cluster) {
    heldByCluster.computeIfPresent(
        cluster,
        (k, held) -> {
          held.remove(vmiKey);
          return held.isEmpty() ? null : held;
        });
  }
}
