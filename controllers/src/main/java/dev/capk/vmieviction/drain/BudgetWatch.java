package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import okhttp3.Call;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One watch on the PodDisruptionBudgets of a cluster (all namespaces), for the stepped drains whose
 * evictions a budget refused: {@code onAllowing} is called with a budget's {@code namespace/name}
 * whenever its status says it allows a disruption (and is current: {@code observedGeneration} not
 * behind {@code generation}, as the API server's eviction check requires), so a refused pod is
 * tried again as soon as its budget can allow it, not when a retry timer says. The timer stays the
 * fallback: a watch that fails is tried again ({@link WatchLoop}: backoff up to 8 s) for as long as
 * it is open, and costs nothing but a later retry meanwhile; one the guest identity may not make
 * (403) ends.
 *
 * <p>Started without a resourceVersion, the watch first reports every budget as it is (so a budget
 * that allowed before the watch started is seen), then each change.
 */
public final class BudgetWatch
    implements AutoCloseable, BudgetAllowance, WatchLoop.Kind<V1PodDisruptionBudget> {
  private static final Logger LOG = LoggerFactory.getLogger(BudgetWatch.class);

  private final Consumer<String> onAllowing;
  private final WatchLoop<V1PodDisruptionBudget> loop;

  /** Each budget as last seen, by {@code namespace/name}. */
  private final Map<String, Seen> budgets = new ConcurrentHashMap<>();

  /**
   * A budget as last seen: the disruptions its status allowed, and how many of them drain steps
   * took since (their evictions were sent; the status catches up when the server accepts them).
   */
  private static final class Seen {
    final V1PodDisruptionBudget budget;
    final int allowed;
    int taken;

    Seen(V1PodDisruptionBudget budget, int allowed) {
      this.budget = budget;
      this.allowed = allowed;
    }
  }

  private BudgetWatch(ApiClient client, String name, Consumer<String> onAllowing) {
    this.onAllowing = onAllowing;
    this.loop = new WatchLoop<>(new RawApi(client), this, null, "budget-watch-" + name);
  }

  /**
   * Starts watching the budgets of the cluster {@code client} reaches; {@code onAllowing} is called
   * on the watch's thread.
   *
   * @param name names the thread (the cluster, for thread dumps)
   */
  public static BudgetWatch start(ApiClient client, String name, Consumer<String> onAllowing) {
    BudgetWatch w = new BudgetWatch(client, name, onAllowing);
    w.loop.start();
    return w;
  }

  /**
   * The budget {@code namespace/name} allowed a disruption when last seen, not yet taken by a step
   * since (a drain woken for a disruption another took would only be held again, and woken again).
   */
  public boolean allows(String budget) {
    Seen seen = budgets.get(budget);
    if (seen == null) {
      return false;
    }
    synchronized (seen) {
      return seen.allowed - seen.taken > 0;
    }
  }

  @Override
  public Set<String> selecting(V1Pod pod) {
    Set<String> names = new TreeSet<>();
    budgets.forEach(
        (key, seen) -> {
          if (selects(seen.budget, pod)) {
            names.add(key);
          }
        });
    return names;
  }

  /** The budget is in the pod's namespace and its selector matches the pod's labels. */
  static boolean selects(V1PodDisruptionBudget budget, V1Pod pod) {
    return pod.getMetadata() != null
        && pod.getMetadata().getNamespace() != null
        && pod.getMetadata().getNamespace().equals(budget.getMetadata().getNamespace())
        && budget.getSpec() != null
        && LabelSelectors.matches(budget.getSpec().getSelector(), pod.getMetadata().getLabels());
  }

  @Override
  public int take(String budget, int wanted) {
    Seen seen = budgets.get(budget);
    if (seen == null) {
      return wanted;
    }
    synchronized (seen) {
      int granted = Math.max(0, Math.min(wanted, seen.allowed - seen.taken));
      seen.taken += granted;
      return granted;
    }
  }

  @Override
  public void close() {
    loop.close();
  }

  @Override
  public Call list(ApiClient client) throws ApiException {
    return new PolicyV1Api(client).listPodDisruptionBudgetForAllNamespaces().buildCall(null);
  }

  /** No list of its own: a watch without a resourceVersion reports every budget first. */
  @Override
  public String relist() {
    return null;
  }

  @Override
  public Class<V1PodDisruptionBudget> objectType() {
    return V1PodDisruptionBudget.class;
  }

  @Override
  public void seen(String type, V1PodDisruptionBudget budget) {
    String key = budget.getMetadata().getNamespace() + "/" + budget.getMetadata().getName();
    if ("DELETED".equals(type)) {
      // A budget gone refuses nothing any more.
      budgets.remove(key);
      onAllowing.accept(key);
      return;
    }
    int now = disruptionsAllowed(budget);
    // A new status counts the evictions it accepted: what was taken before is forgotten.
    budgets.put(key, new Seen(budget, now));
    if (now > 0) {
      onAllowing.accept(key);
    }
  }

  @Override
  public boolean giveUp(Exception failure, int failures) {
    if (failure instanceof ApiException ae && ae.getCode() == 403) {
      // The guest identity may not watch budgets: refused pods wait for the retry timer.
      LOG.info("budget watch refused (HTTP 403), refused evictions are retried on a timer");
      return true;
    }
    LOG.debug(
        "budget watch failed, retrying failures={} reason={}",
        failures,
        WatchLoop.describe(failure));
    return false;
  }

  /**
   * What the API server's eviction check would allow now: none while the status is older than the
   * budget's spec (the server refuses evictions then too), else the status's count.
   */
  static int disruptionsAllowed(V1PodDisruptionBudget budget) {
    var status = budget.getStatus();
    if (status == null || status.getDisruptionsAllowed() == null) {
      return 0;
    }
    Long generation = budget.getMetadata() == null ? null : budget.getMetadata().getGeneration();
    Long observed = status.getObservedGeneration();
    if (generation != null && (observed == null || observed < generation)) {
      return 0;
    }
    return status.getDisruptionsAllowed();
  }
}
