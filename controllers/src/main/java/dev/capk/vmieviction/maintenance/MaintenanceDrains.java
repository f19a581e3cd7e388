package dev.capk.vmieviction.maintenance;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainMemory;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.DrainStepper;
import dev.capk.vmieviction.drain.NodePodWatch;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node drains of the maintenances under way, by maintenance UID: a watch on the node's pods
 * (which wakes the maintenance's next step when pods leave) and the drain's memory between steps.
 * Opened by a maintenance's first step, closed when its drain is over or it is deleted. A step
 * never waits: the work queue brings the maintenance back, through the watch or at the step's next
 * due time.
 */
public final class MaintenanceDrains implements NodeDrainSteps, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MaintenanceDrains.class);

  private record Drain(String name, String node, NodePodWatch watch, DrainMemory memory) {}

  private final ApiClient client;
  private final Consumer<String> wake;
  private final Duration baseRetry;
  private final Duration maxRetry;
  private final ExecutorService evictions;
  private final DrainStepper stepper;
  private final Map<String, Drain> drains = new ConcurrentHashMap<>();

  /**
   * @param wake enqueues a maintenance (by name) for its next step
   * @param baseRetry the first wait after a refused eviction
   * @param maxRetry the longest wait between two evictions of a refused pod
   */
  public MaintenanceDrains(
      ApiClient client, Consumer<String> wake, Duration baseRetry, Duration maxRetry) {
    this.client = client;
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
            new ThreadFactoryBuilder()
                .setNameFormat("node-maintenance-eviction-%d")
                .setDaemon(true)
                .build());
    this.stepper = new DrainStepper(client, evictions, Clock.systemUTC());
  }

  @Override
  public DrainStep step(String uid, String name, String node, DrainOptions options)
      throws ApiException, DrainRefusedException {
    Drain drain = open(uid, name, node);
    // The watch's cache once it has listed; a list of our own until then.
    Optional<List<V1Pod>> watched = drain.watch().pods();
    List<V1Pod> pods = watched.isPresent() ? watched.get() : list(node);
    return stepper.step(node, pods, options, drain.memory());
  }

  /** The maintenance's drain, opened if there is none; a watch that gave up is replaced. */
  private Drain open(String uid, String name, String node) {
    Drain current = drains.get(uid);
    if (current != null && current.node().equals(node) && current.watch().failure().isEmpty()) {
      return current;
    }
    Drain opened =
        new Drain(
            name,
            node,
            NodePodWatch.start(client, node, () -> wake.accept(name)),
            current != null && current.node().equals(node)
                ? current.memory()
                : new DrainMemory(baseRetry, maxRetry));
    Drain replaced = drains.put(uid, opened);
    if (replaced != null) {
      replaced.watch().close();
    }
    log.debug("node pod watch opened nodeMaintenance={} node={}", name, node);
    return opened;
  }

  private List<V1Pod> list(String node) throws ApiException {
    V1PodList list =
        new RawApi(client)
            .get(
                new CoreV1Api(client)
                    .listPodForAllNamespaces()
                    .fieldSelector("spec.nodeName=" + node)
                    .buildCall(null),
                V1PodList.class);
    return list.getItems() == null ? List.of() : list.getItems();
  }

  @Override
  public void end(String uid) {
    Drain d = drains.remove(uid);
    if (d != null) {
      d.watch().close();
      log.debug("node pod watch closed nodeMaintenance={} node={}", d.name(), d.node());
    }
  }

  @Override
  public void endNamed(String name) {
    drains.forEach(
        (uid, d) -> {
          if (d.name().equals(name)) {
            end(uid);
          }
        });
  }

  /** Drains under way, for tests. */
  public int open() {
    return drains.size();
  }

  /** Stops every watch (the lease is lost or the controller stops); steps may open them again. */
  public void endAll() {
    drains.keySet().forEach(this::end);
  }

  @Override
  public void close() {
    endAll();
    evictions.shutdownNow();
  }
}
