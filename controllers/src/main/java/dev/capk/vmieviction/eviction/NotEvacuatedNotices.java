package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the admin draining an infra node why a VMI marked for evacuation is left to KubeVirt rather
 * than evacuated by this controller: its strategy is unknown, or it is only the operator's
 * fallback.
 */
final class NotEvacuatedNotices {

  private static final Logger log = LoggerFactory.getLogger(NotEvacuatedNotices.class);

  private final VmiEvents events;

  /**
   * VMI UIDs already told that the fallback strategy leaves them to KubeVirt: once per VMI, not per
   * update.
   */
  private final Cache<String, Boolean> toldFallback =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  NotEvacuatedNotices(VmiEvents events) {
    this.events = events;
  }

  /**
   * @param strategy the effective strategy, which is not External
   * @param fromFallback true when neither the VMI nor the KubeVirt CR set it
   */
  void leftToKubeVirt(
      String key, VirtualMachineInstance vmi, String strategy, boolean fromFallback) {
    if (!Eligibility.evacuationRequested(vmi)) {
      return;
    }
    if (strategy != null && !EvictionStrategies.isKnown(strategy)) {
      String shown = shorten(strategy);
      log.warn("unknown eviction strategy, not evacuating vmi={} strategy=\"{}\"", key, shown);
      events.warning(
          vmi,
          EventReasons.EVICTION_STRATEGY_UNKNOWN,
          "Eviction strategy \""
              + shown
              + "\" is not one of "
              + String.join(", ", EvictionStrategies.KNOWN)
              + ": not evacuating this VMI, it is left to KubeVirt");
    }
    if (fromFallback) {
      tellFallback(key, vmi, strategy);
    }
  }

  private void tellFallback(String key, VirtualMachineInstance vmi, String strategy) {
    String uid = vmi.getMetadata().getUid();
    if (uid == null || toldFallback.asMap().putIfAbsent(uid, Boolean.TRUE) != null) {
      return;
    }
    log.info(
        "evacuation left to KubeVirt, no eviction strategy set vmi={} fallback={}", key, strategy);
    events.normal(
        vmi,
        EventReasons.EVACUATION_LEFT_TO_KUBEVIRT,
        "Infra node "
            + Eligibility.evacuationNodeName(vmi)
            + " is being drained, but neither this VMI nor the"
            + " KubeVirt CR sets an evictionStrategy, so the controller's fallback (--default-eviction-strategy="
            + strategy
            + ") applies and KubeVirt handles this VMI itself. To have its guest node drained first, set"
            + " evictionStrategy: External on the VMI (CAPK's VM template) or in the KubeVirt CR.");
  }

  /** Hostile values are cut before they reach a log line or an event. */
  static String shorten(String raw) {
    return raw.length() > 64 ? raw.substring(0, 64) + "..." : raw;
  }
}
