package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.extended.controller.reconciler.Result;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * VMIs that set no eviction strategy of their own while the KubeVirt CR, whose strategy then
 * applies, cannot be read: whether they are ours is not known, so they are neither evacuated nor
 * left to KubeVirt. Each waits with backoff; a VMI marked for evacuation is told why in a Warning;
 * all are woken as soon as a read answers.
 */
final class UnknownStrategyWaits {

  private static final Logger log = LoggerFactory.getLogger(UnknownStrategyWaits.class);

  private final VmiEvents events;
  private final EvacuationMemory memory;
  private final Consumer<String> wake;

  /** VMIs (namespace/name) waiting for the KubeVirt CR. */
  private final Set<String> waiting = ConcurrentHashMap.newKeySet();

  /** Those of them whose wait was logged: once per wait of a marked VMI, not per retry. */
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

  UnknownStrategyWaits(VmiEvents events, EvacuationMemory memory, Consumer<String> wake) {
    this.events = events;
    this.memory = memory;
    this.wake = wake;
  }

  /**
   * @param what the failed read, as {@link Readout.Unreadable} describes it
   * @return look again after the VMI's next backoff step
   */
  Result waitFor(String key, VirtualMachineInstance vmi, String what) {
    waiting.add(key);
    if (Eligibility.evacuationRequested(vmi)) {
      if (logged.add(key)) {
        log.warn("eviction strategy unknown, evacuation waits vmi={} unreadable=\"{}\"", key, what);
      }
      events.warning(
          vmi,
          EventReasons.KUBEVIRT_CONFIG_UNREADABLE,
          "This VMI sets no evictionStrategy, so the KubeVirt CR's"
              + " spec.configuration.evictionStrategy decides whether the controller evacuates it,"
              + " and the KubeVirt CR could not be read ("
              + what
              + "). Neither evacuated nor left to KubeVirt until it is read; trying again with"
              + " backoff.");
    }
    return new Result(true, memory.backoff(key));
  }

  /** A read answered: every VMI waiting for it looks again now, with its backoff reset. */
  void answered(String key) {
    if (waiting.isEmpty()) {
      return;
    }
    if (waiting.remove(key)) {
      logged.remove(key);
      memory.succeeded(key);
    }
    for (String other : List.copyOf(waiting)) {
      if (waiting.remove(other)) {
        logged.remove(other);
        memory.succeeded(other);
        wake.accept(other);
      }
    }
  }

  /** The VMI is gone or not ours: it waits no more. */
  void ended(String key) {
    waiting.remove(key);
    logged.remove(key);
  }
}
