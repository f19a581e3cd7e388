package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.SteppedDrains;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
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
public final class MaintenanceDrains
    implements NodeMaintenanceReconciler.DrainSteps, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MaintenanceDrains.class);

  private final ApiClient client;
  private final Consumer<String> wake;
  private final SteppedDrains drains;

  /** Names by UID: the work queue's key is the name. */
  private final Map<String, String> names = new ConcurrentHashMap<>();

  /**
   * @param wake enqueues a maintenance (by name) for its next step
   * @param baseRetry first wait after a refused eviction, doubling up to {@code maxRetry}
   */
  public MaintenanceDrains(
      ApiClient client, Consumer<String> wake, Duration baseRetry, Duration maxRetry) {
    this.client = client;
    this.wake = wake;
    this.drains = new SteppedDrains("node-maintenance-eviction-%d", baseRetry, maxRetry);
  }

  @Override
  public DrainStep step(String uid, String name, String node, DrainOptions options)
      throws ApiException, DrainRefusedException {
    names.put(uid, name);
    boolean opening = drains.get(uid).map(d -> !d.node().equals(node)).orElse(true);
    SteppedDrains.Drain drain =
        drains.open(uid, client, node, (key, n) -> wake.accept(names.getOrDefault(key, name)));
    if (opening) {
      log.debug("node pod watch opened nodeMaintenance={} node={}", name, node);
    }
    // The watch's cache once it has listed; a list of our own until then.
    Optional<List<V1Pod>> pods = drain.watch().pods();
    if (pods.isEmpty()) {
      V1PodList list =
          new RawApi(client)
              .get(
                  new CoreV1Api(client)
                      .listPodForAllNamespaces()
                      .fieldSelector("spec.nodeName=" + node)
                      .buildCall(null),
                  V1PodList.class);
      pods = Optional.of(list.getItems() == null ? List.of() : list.getItems());
    }
    return drains.stepper(client).step(node, pods.get(), options, drain.memory());
  }

  @Override
  public void end(String uid) {
    String name = names.remove(uid);
    drains
        .end(uid)
        .ifPresent(
            d -> log.debug("node pod watch closed nodeMaintenance={} node={}", name, d.node()));
  }

  @Override
  public void endNamed(String name) {
    names.entrySet().stream()
        .filter(e -> e.getValue().equals(name))
        .toList()
        .forEach(e -> end(e.getKey()));
  }

  /** Stops every watch (the lease is lost or the controller stops); steps may open them again. */
  public void endAll() {
    List.copyOf(drains.keys()).forEach(this::end);
  }

  @Override
  public void close() {
    endAll();
    drains.close();
  }
}
