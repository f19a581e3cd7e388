package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.EvictionStrategy;
import java.util.List;
import java.util.Optional;

/** Which eviction strategy applies to a VMI. Pure. */
public final class EvictionStrategies {
  private EvictionStrategies() {}

  /**
   * The strategy KubeVirt applies: the VMI's own when set, else the cluster-wide default from the
   * KubeVirt CR when it could be read and is set, else the operator-given fallback.
   */
  public static String effective(
      String vmiStrategy, Optional<String> clusterDefault, String fallback) {
    if (!isBlank(vmiStrategy)) {
      return vmiStrategy.trim();
    }
    return clusterDefault.filter(s -> !isBlank(s)).map(String::trim).orElse(fallback);
  }

  /** True when neither the VMI nor the KubeVirt CR says, so the operator's fallback decides. */
  public static boolean isFallback(String vmiStrategy, Optional<String> clusterDefault) {
    return isBlank(vmiStrategy) && clusterDefault.filter(s -> !isBlank(s)).isEmpty();
  }

  /**
   * The values KubeVirt accepts, in its API's spelling (case-sensitive, as KubeVirt compares them).
   */
  public static final List<String> KNOWN =
      List.of(
          EvictionStrategy.NONE,
          EvictionStrategy.LIVE_MIGRATE,
          EvictionStrategy.LIVE_MIGRATE_IF_POSSIBLE,
          EvictionStrategy.EXTERNAL);

  public static boolean isKnown(String strategy) {
    return strategy != null && KNOWN.contains(strategy);
  }

  public static boolean isExternal(String strategy) {
    return EvictionStrategy.EXTERNAL.equals(strategy);
  }

  private static boolean isBlank(String s) {
    return s == null || s.isBlank();
  }
}
