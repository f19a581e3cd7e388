package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.EventReasons.Told;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import io.kubernetes.client.extended.controller.reconciler.Result;
import org.slf4j.event.Level;

/**
 * Tells the admin draining an infra node why a VMI marked for evacuation is left to KubeVirt rather
 * than evacuated by this controller: its strategy is unknown, or it is only the operator's
 * fallback. And holds the VMIs that set no eviction strategy of their own while the KubeVirt CR,
 * whose strategy then applies, cannot be read: whether they are ours is not known, so they are
 * neither evacuated nor left to KubeVirt. Each waits with backoff; a VMI marked for evacuation is
 * told why in a Warning; all are woken as soon as a read answers.
 */
final class NotEvacuatedNotices {

  /**
   * VMI UIDs already told that the fallback strategy leaves them to KubeVirt: once per VMI, not per
   * update.
   */
  private final Cache<String, Boolean> toldFallback =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  /** What the VMIs that set no strategy wait for while the KubeVirt CR cannot be read. */
  private static final String CR = "the KubeVirt CR";

  private final StepContext c;

  NotEvacuatedNotices(StepContext c) {
    this.c = c;
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
    if (strategy != null && !Eligibility.KNOWN_STRATEGIES.contains(strategy)) {
      String known = String.join(", ", Eligibility.KNOWN_STRATEGIES);
      Told.STRATEGY_UNKNOWN.to(c.events, vmi, key, shorten(strategy), known);
    }
    String uid = vmi.getMetadata().getUid();
    if (fromFallback && uid != null && toldFallback.asMap().putIfAbsent(uid, true) == null) {
      String infraNode = Eligibility.evacuationNodeName(vmi);
      Told.LEFT_TO_KUBEVIRT.to(c.events, vmi, key, strategy, infraNode);
    }
  }

  /**
   * @param what the failed read, as {@link ClusterDefaults.Readout.Unreadable} describes it
   * @return look again after the VMI's next backoff step
   */
  Result waitFor(String key, VirtualMachineInstance vmi, String what) {
    // Logged once per wait, not per retry.
    Level level = c.waitFor(CR, key) ? Level.WARN : Level.DEBUG;
    if (Eligibility.evacuationRequested(vmi)) {
      Told.CONFIG_UNREADABLE.to(c.events, level, vmi, key, what);
    }
    return new Result(true, c.backoff(key));
  }

  /** A read answered: every VMI waiting for it looks again now, with its backoff reset. */
  void answered(String key) {
    c.waitOver(CR, key).forEach(c::succeeded);
  }

  /** Hostile values are cut before they reach a log line or an event. */
  static String shorten(String raw) {
    return raw.length() > 64 ? raw.substring(0, 64) + "..." : raw;
  }
}
