package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The node drains a controller carries out in steps, each under a key of the caller's (a VMI, a
 * NodeMaintenance): the watch on the node's pods, which calls back when pods leave, and the drain's
 * memory between steps. {@link #open} opens a drain at its first step and reopens a watch that gave
 * up or that another client or node replaces (keeping the memory for the same node); {@link #end}
 * closes it. Threads for the steps' eviction requests are shared by all drains.
 */
public final class SteppedDrains implements AutoCloseable {

  /** One key's drain: its client and node, the watch on the node's pods, its memory. */
  public record Drain(ApiClient client, String node, NodePodWatch watch, DrainMemory memory) {}

  private final Duration baseRetry;
  private final Duration maxRetry;
  private final Map<String, Drain> drains = new ConcurrentHashMap<>();
  private final ExecutorService evictions;

  /**
   * Whether each client's cluster serves evictions, asked at its first drain: a client (a guest
   * cluster's, rebuilt when its kubeconfig changes) is forgotten with it.
   */
  private final Map<ApiClient, CompletableFuture<Optional<String>>> evictionSupport =
      Collections.synchronizedMap(new WeakHashMap<>());

  /**
   * @param threadName names the eviction threads ({@code %d}: their number)
   * @param baseRetry the first wait after a refused eviction (cut to {@code maxRetry})
   * @param maxRetry the longest wait between two evictions of a refused pod
   */
  public SteppedDrains(String threadName, Duration baseRetry, Duration maxRetry) {
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
            new ThreadFactoryBuilder().setNameFormat(threadName).setDaemon(true).build());
  }

  /**
   * The drain under {@code key} of {@code node} through {@code client}, opened (its watch started,
   * calling {@code onPodsLeft} with the key) if there is none, or if its watch gave up or was for
   * another client or node.
   */
  public Drain open(
      String key, ApiClient client, String node, BiConsumer<String, String> onPodsLeft) {
    return open(key, client, node, onPodsLeft, null);
  }

  /**
   * As {@link #open(String, ApiClient, String, BiConsumer)}; a watch started here resumes from
   * {@code seed}, the caller's fresh list of the node's pods (null: it lists itself).
   */
  public Drain open(
      String key,
      ApiClient client,
      String node,
      BiConsumer<String, String> onPodsLeft,
      V1PodList seed) {
    Optional<Drain> usable = usable(key, client, node);
    if (usable.isPresent()) {
      return usable.get();
    }
    Drain current = drains.get(key);
    Drain opened =
        new Drain(
            client,
            node,
            NodePodWatch.start(new RawApi(client), node, () -> onPodsLeft.accept(key, node), seed),
            current != null && current.node.equals(node)
                ? current.memory
                : new DrainMemory(baseRetry, maxRetry));
    Drain replaced = drains.put(key, opened);
    if (replaced != null) {
      replaced.watch.close();
    }
    return opened;
  }

  /**
   * The drain under {@code key} if it is open for {@code node} through {@code client} and its watch
   * still runs: what {@link #open} would return without starting a watch.
   */
  public Optional<Drain> usable(String key, ApiClient client, String node) {
    Drain current = drains.get(key);
    if (current != null
        && current.client == client
        && current.node.equals(node)
        && current.watch.failure().isEmpty()) {
      return Optional.of(current);
    }
    return Optional.empty();
  }

  /** A stepper for the drains through {@code client}. */
  public DrainStepper stepper(ApiClient client) {
    return new DrainStepper(client, evictions, Clock.systemUTC(), evictionSupport);
  }

  /** The drain under {@code key}, if one is open. */
  public Optional<Drain> get(String key) {
    return Optional.ofNullable(drains.get(key));
  }

  /** Closes the drain under {@code key}: its watch stops. */
  public Optional<Drain> end(String key) {
    Drain d = drains.remove(key);
    if (d != null) {
      d.watch.close();
    }
    return Optional.ofNullable(d);
  }

  /** The keys of the drains open now. */
  public Set<String> keys() {
    return drains.keySet();
  }

  /** Drains open now. */
  public int size() {
    return drains.size();
  }

  @Override
  public void close() {
    drains.values().forEach(d -> d.watch.close());
    drains.clear();
    evictions.shutdownNow();
  }
}
