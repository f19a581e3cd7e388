package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.drain.DrainStepper;
import dev.capk.vmieviction.drain.SteppedDrains;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest node drains under way, one per VMI being evacuated (by {@code namespace/name}): the
 * watch on the guest node's pods, which wakes the VMI's next step when pods leave, and the drain's
 * memory between steps ({@link SteppedDrains}). Opened by the first drain step of a VMI, closed
 * when its evacuation ends; a drain of another node or through another client (a rotated
 * kubeconfig) replaces it.
 */
public final class NodeDrains implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(NodeDrains.class);

  private final Consumer<String> wake;
  private final SteppedDrains drains;

  /** VMIs woken because pods left their guest node, until their next step asks. */
  private final Set<String> woken = ConcurrentHashMap.newKeySet();

  /**
   * @param wake enqueues a VMI (by {@code namespace/name}) for its next step
   * @param baseRetry the first wait after a refused eviction
   * @param maxRetry the longest wait between two evictions of a refused pod
   */
  public NodeDrains(Consumer<String> wake, Duration baseRetry, Duration maxRetry) {
    this.wake = wake;
    this.drains = new SteppedDrains("guest-eviction-%d", baseRetry, maxRetry);
  }

  /**
   * The drain of {@code node} for the VMI {@code vmiKey} through {@code client}, opened (and its
   * watch started) if there is none yet, or if its watch gave up.
   */
  SteppedDrains.Drain forVmi(String vmiKey, ApiClient client, String node) {
    boolean opening = drains.get(vmiKey).isEmpty();
    SteppedDrains.Drain d = drains.open(vmiKey, client, node, (key, n) -> wakeUp(key));
    if (opening) {
      log.debug("guest pod watch opened vmi={} node={}", vmiKey, node);
    }
    return d;
  }

  /** A stepper for drains through {@code client}, sharing this registry's eviction threads. */
  DrainStepper stepper(ApiClient client) {
    return drains.stepper(client);
  }

  private void wakeUp(String vmiKey) {
    log.debug("guest pods left, waking vmi={}", vmiKey);
    woken.add(vmiKey);
    wake.accept(vmiKey);
  }

  /** True once after pods left the VMI's guest node. */
  boolean takeWake(String vmiKey) {
    return woken.remove(vmiKey);
  }

  /** The VMI's evacuation ended (or it is gone): stop watching its guest node. */
  void end(String vmiKey) {
    woken.remove(vmiKey);
    drains
        .end(vmiKey)
        .ifPresent(d -> log.debug("guest pod watch closed vmi={} node={}", vmiKey, d.node()));
  }

  /** Drains under way, for metrics and tests. */
  public int open() {
    return drains.size();
  }

  @Override
  public void close() {
    drains.close();
  }
}
