package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import io.kubernetes.client.extended.controller.reconciler.Result;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the admin draining an infra node why a VMI marked for evacuation is left to KubeVirt rather
 * than evacuated by this controller: its strategy is unknown, or it is only the operator's
 * fallback. And holds the VMIs that set no eviction strategy of their own while the KubeVirt CR,
 * whose strategy then applies, cannot be read: whether they are ours is not known, so they are
 * neither evacuated nor left to KubeVirt. Each waits with backoff; a VMI marked for evacuation is
 * told why in a Warning; all are woken as soon as a read answers.
 */
final class NotEvacuatedNotices {

  private static final Logger log = LoggerFactory.getLogger(NotEvacuatedNotices.class);

  /**
   * VMI UIDs already told that the fallback strategy leaves them to KubeVirt: once per VMI, not per
   * update.
   */
  private final Cache<String, Boolean> toldFallback =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  /** VMIs (namespace/name) waiting for the KubeVirt CR. */
  private final Set<String> waiting = ConcurrentHashMap.newKeySet();

  /** Those of them whose wait was logged: once per wait of a marked VMI, not per retry. */
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

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
      String shown = shorten(strategy);
      log.warn("unknown eviction strategy, not evacuating vmi={} strategy=\"{}\"", key, shown);
      c.events()
          .warning(
              vmi,
              EventReasons.EVICTION_STRATEGY_UNKNOWN,
              "Eviction strategy \""
                  + shown
                  + "\" is not one of "
                  + String.join(", ", Eligibility.KNOWN_STRATEGIES)
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
    c.events()
        .normal(
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

  /**
   * @param what the failed read, as {@link ClusterDefaults.Readout.Unreadable} describes it
   * @return look again after the VMI's next backoff step
   */
  Result waitFor(String key, VirtualMachineInstance vmi, String what) {
    waiting.add(key);
    if (Eligibility.evacuationRequested(vmi)) {
      if (logged.add(key)) {
        log.warn("eviction strategy unknown, evacuation waits vmi={} unreadable=\"{}\"", key, what);
      }
      c.events()
          .warning(
              vmi,
              EventReasons.KUBEVIRT_CONFIG_UNREADABLE,
              "This VMI sets no evictionStrategy, so the KubeVirt CR's"
                  + " spec.configuration.evictionStrategy decides whether the controller evacuates it,"
                  + " and the KubeVirt CR could not be read ("
                  + what
                  + "). Neither evacuated nor left to KubeVirt until it is read; trying again with"
                  + " backoff.");
    }
    return new Result(true, c.memory().backoff(key));
  }

  /** A read answered: every VMI waiting for it looks again now, with its backoff reset. */
  void answered(String key) {
    if (waiting.isEmpty()) {
      return;
    }
    if (waiting.remove(key)) {
      logged.remove(key);
      c.memory().succeeded(key);
    }
    for (String other : List.copyOf(waiting)) {
      if (waiting.remove(other)) {
        logged.remove(other);
        c.memory().succeeded(other);
        c.wake().accept(other);
      }
    }
  }

  /** The VMI is gone or not ours: it waits no more. */
  void waitEnded(String key) {
    waiting.remove(key);
    logged.remove(key);
  }

  /** Hostile values are cut before they reach a log line or an event. */
  static String shorten(String raw) {
    return raw.length() > 64 ? raw.substring(0, 64) + "..." : raw;
  }
}
