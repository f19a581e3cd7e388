package dev.capk.vmieviction.eviction;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainMemory;
import dev.capk.vmieviction.drain.NodePodWatch;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest node drains under way, one per VMI being evacuated: the watch on the guest node's pods
 * (which wakes the VMI's next step when pods leave) and the drain's memory between steps. Opened by
 * the first drain step of a VMI, closed when its evacuation ends; a drain of another node or
 * through another client (a rotated kubeconfig) replaces it.
 */
public final class NodeDrains implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(NodeDrains.class);

  /** One VMI's drain. */
  public static final class Drain {
    private final ApiClient client;
    private final String node;
    private final NodePodWatch watch;
    private final DrainMemory memory;

    private Drain(ApiClient client, String node, NodePodWatch watch, DrainMemory memory) {
      this.client = client;
      this.node = node;
      this.watch = watch;
      this.memory = memory;
    }

    public NodePodWatch watch() {
      return watch;
    }

    public DrainMemory memory() {
      return memory;
    }
  }

  private final Consumer<String> wake;
  private final Duration baseRetry;
  private final Duration maxRetry;
  private final Map<String, Drain> drains = new ConcurrentHashMap<>();

  /** VMIs woken because pods left their guest node, until their next step asks. */
  private final Set<String> woken = ConcurrentHashMap.newKeySet();

  private final ExecutorService evictions;

  /**
   * @param wake enqueues a VMI (by {@code namespace/name}) for its next step
   * @param baseRetry the first wait after a refused eviction
   * @param maxRetry the longest wait between two evictions of a refused pod
   */
  public NodeDrains(Consumer<String> wake, Duration baseRetry, Duration maxRetry) {
    this.wake = wake;
    this.baseRetry = baseRetry.compareTo(maxRetry) > 0 ? maxRetry : baseRetry;
    this.maxRetry = maxRetry;
    // Threads for the eviction requests of steps in flight; idle ones go after a minute.
    this.evictions =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            1,
            TimeUnit.MINUTES,
            new SynchronousQueue<>(),
            new ThreadFactoryBuilder().setNameFormat("guest-eviction-%d").setDaemon(true).build());
  }

  /** Runs one step's eviction requests side by side. */
  ExecutorService evictions() {
    return evictions;
  }

  /**
   * The drain of {@code node} for the VMI {@code vmiKey} through {@code client}, opened (and its
   * watch started) if there is none yet.
   */
  Drain forVmi(String vmiKey, ApiClient client, String node) {
    Drain current = drains.get(vmiKey);
    if (current != null && current.client == client && current.node.equals(node)) {
      return current;
    }
    Drain opened =
        new Drain(
            client,
            node,
            NodePodWatch.start(client, node, () -> wakeUp(vmiKey)),
            current != null && current.node.equals(node)
                ? current.memory
                : new DrainMemory(baseRetry, maxRetry));
    Drain replaced = drains.put(vmiKey, opened);
    if (replaced != null) {
      replaced.watch.close();
    }
    log.debug("guest pod watch opened vmi={} node={}", vmiKey, node);
    return opened;
  }

  /** A watch that gave up is replaced at the next step; its memory is kept. */
  void reopenIfFailed(String vmiKey) {
    Drain d = drains.get(vmiKey);
    if (d != null && d.watch.failure().isPresent() && drains.remove(vmiKey, d)) {
      d.watch.close();
      drains.put(
          vmiKey,
          new Drain(
              d.client,
              d.node,
              NodePodWatch.start(d.client, d.node, () -> wakeUp(vmiKey)),
              d.memory));
    }
  }

  private void wakeUp(String vmiKey) {
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
    Drain d = drains.remove(vmiKey);
    if (d != null) {
      d.watch.close();
      log.debug("guest pod watch closed vmi={} node={}", vmiKey, d.node);
    }
  }

  /** Drains under way, for metrics and tests. */
  public int open() {
    return drains.size();
  }

  @Override
  public void close() {
    drains.values().forEach(d -> d.watch.close());
    drains.clear();
    evictions.shutdownNow();
  }
}
