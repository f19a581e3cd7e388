package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.drain.SteppedDrains.WatchLoop;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import okhttp3.Call;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node of a cluster, kept by a watch selected by its name (its state streamed as the watch's
 * first events, else listed), so the steps of its evacuation read it without a GET each. Only that
 * node: what this costs does not grow with the size of the tenant's cluster (a watch of every node
 * did: each tenant's client kept all the nodes its credentials could see). A node's image and
 * volume lists and managed fields are dropped (tens of kB).
 *
 * <p>An answer only while the watch is up ({@link #current}); while the server is not reached, the
 * callers read the node themselves, and that read names the outage. A node this process patched is
 * served as the patch left it until the watch passes the version the patch was made over, so a step
 * never reads back a node from before its own write.
 */
public final class NodeWatch extends WatchLoop<V1Node> {
  private static final Logger LOG = LoggerFactory.getLogger(NodeWatch.class);

  // Guarded by this: the nodes by name; per node, our last write's result and the versions it was
  // made over; the nodes whose last patch of ours was refused (see refused()).
  private final Map<String, V1Node> nodes = new HashMap<>();
  private final Map<String, Written> written = new HashMap<>();
  private final Set<String> refused = new HashSet<>();

  private record Written(V1Node result, Set<String> superseded) {}

  /** Unused this long, the watch ends after its current request. */
  static final Duration IDLE = Duration.ofMinutes(5);

  private volatile boolean listed;
  private volatile boolean gaveUp;
  private volatile boolean ended;
  private volatile long usedNanos = System.nanoTime();

  /** The node watched. */
  private final String nodeName;

  private NodeWatch(RawApi api, String nodeName, String threadName) {
    super(api, V1Node.class, null, "node-watch-" + threadName);
    this.nodeName = nodeName;
  }

  /** Watches the node named {@code nodeName}; {@code cluster} names the thread. */
  public static NodeWatch start(ApiClient client, String cluster, String nodeName) {
    NodeWatch w = new NodeWatch(new RawApi(client), nodeName, cluster + "/" + nodeName);
    w.startThread();
    return w;
  }

  /** Not started: fed by hand through {@link #seen}, for tests. */
  static NodeWatch unstarted(String nodeName, V1NodeList seed) {
    NodeWatch w = new NodeWatch(null, nodeName, "unstarted");
    w.replace(seed);
    return w;
  }

  /** Waits at most {@code maxWait} for the first list; then whether this is {@link #current}. */
  public synchronized boolean awaitListed(Duration maxWait) throws InterruptedException {
    long end = System.nanoTime() + maxWait.toNanos();
    for (long left = maxWait.toNanos();
        !listed && !gaveUp && !ended && !failing && left > 0;
        left = end - System.nanoTime()) {
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return current();
  }

  /** Listed, and the watch is up. */
  public boolean current() {
    return listed && !gaveUp && !ended && !failing;
  }

  /**
   * Ended idle or closed, or refused and then unused for {@link #IDLE} (a watch the guest identity
   * may not make is not tried again at every step).
   */
  public boolean over() {
    return ended || (gaveUp && idle());
  }

  @Override
  boolean wanted() {
    if (idle()) {
      ended = true;
    }
    return !ended;
  }

  private boolean idle() {
    return System.nanoTime() - usedNanos > IDLE.toNanos();
  }

  public synchronized Optional<V1Node> node(String name) {
    usedNanos = System.nanoTime();
    V1Node cached = nodes.get(name);
    Written w = written.get(name);
    if (w != null) {
      if (cached != null && w.superseded().contains(cached.getMetadata().getResourceVersion())) {
        return Optional.of(w.result());
      }
      written.remove(name);
    }
    return Optional.ofNullable(cached);
  }

  /** Our write over {@code before} gave {@code after}: served until the watch catches up. */
  public synchronized void wrote(V1Node before, V1Node after) {
    if (after == null || after.getMetadata() == null || before.getMetadata() == null) {
      return;
    }
    String name = after.getMetadata().getName();
    String over = before.getMetadata().getResourceVersion();
    Written known = written.get(name);
    Set<String> superseded = new HashSet<>(known == null ? Set.of() : known.superseded());
    if (over != null) {
      superseded.add(over);
    }
    written.put(name, new Written(trimmed(after), Set.copyOf(superseded)));
  }

  /**
   * Our patch of the node was refused as made over an old version: the next {@link #refusedSince}
   * says so, and its caller reads the node from the API (this watch may be behind).
   */
  public synchronized void refused(String name) {
    refused.add(name);
  }

  public synchronized boolean refusedSince(String name) {
    return refused.remove(name);
  }

  @Override
  Call list() throws ApiException {
    return new CoreV1Api(api.client())
        .listNode()
        .fieldSelector("metadata.name=" + nodeName)
        .buildCall(null);
  }

  @Override
  String relist() throws ApiException {
    V1NodeList list = api.get(list(), V1NodeList.class);
    replace(list);
    return list.getMetadata().getResourceVersion();
  }

  /** The node comes as the watch's first event: no list request of its own. */
  @Override
  boolean streamsState() {
    return true;
  }

  @Override
  synchronized void stateStarts() {
    // Not current until the state ended: steps read the node themselves meanwhile.
    listed = false;
    nodes.clear();
  }

  @Override
  synchronized void stateComplete() {
    listed = true;
    notifyAll();
  }

  private synchronized void replace(V1NodeList list) {
    nodes.clear();
    list.getItems().forEach(n -> nodes.put(n.getMetadata().getName(), trimmed(n)));
    listed = true;
    notifyAll();
  }

  @Override
  void seen(String type, V1Node node) {
    String name = node.getMetadata().getName();
    synchronized (this) {
      if ("DELETED".equals(type)) {
        nodes.remove(name);
        written.remove(name);
      } else {
        nodes.put(name, trimmed(node));
      }
    }
  }

  @Override
  synchronized boolean giveUp(Exception failure, int failures) {
    // Steps waiting for the first list read their nodes themselves.
    notifyAll();
    if (failure instanceof ApiException ae && ae.getCode() == 403) {
      // The guest identity may not watch nodes: each step reads its node itself.
      LOG.info("node watch refused (HTTP 403), guest nodes are read per step");
      gaveUp = true;
      nodes.clear();
      written.clear();
      return true;
    }
    LOG.debug("node watch failed, retrying failures={} reason={}", failures, describe(failure));
    return false;
  }

  private static V1Node trimmed(V1Node node) {
    node.getMetadata().setManagedFields(null);
    if (node.getStatus() != null) {
      node.getStatus().setImages(null);
      node.getStatus().setVolumesAttached(null);
      node.getStatus().setVolumesInUse(null);
    }
    return node;
  }

  @Override
  public void close() {
    ended = true;
    super.close();
  }

  /**
   * The PodDisruptionBudgets of one cluster that refused its drains, each kept by a watch selected
   * by its name ({@link #follow}): only those, so what this holds does not grow with the budgets of
   * the tenant's cluster. {@code onAllowing} gets a budget's {@code namespace/name} whenever its
   * current status allows a disruption, so a refused pod is tried again as soon as its budget can
   * allow it, not when its retry timer says (the timer stays the fallback; a 403 ends a budget's
   * watch). Started without a resourceVersion, a budget's watch first reports it as it is (no list
   * request). It also lets a step send no more evictions than a budget allows: the rest would only
   * be refused (429). The eviction API stays the judge, and a budget not followed (none refused
   * yet) limits nothing here.
   */
  public static final class BudgetWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BudgetWatch.class);

    /** Knows no budget: every due pod is sent its eviction, as kubectl does. */
    public static final BudgetWatch NONE = new BudgetWatch(null, "none", budget -> {});

    private final ApiClient client;
    private final String name;
    private final Consumer<String> onAllowing;

    private final Map<String, Seen> budgets = new ConcurrentHashMap<>();

    /** Guarded by this: the watch of each budget followed, by {@code namespace/name}. */
    private final Map<String, Followed> followed = new HashMap<>();

    private volatile boolean closed;

    /** A budget as last seen, and how many disruptions it allows that no step took since. */
    private record Seen(V1PodDisruptionBudget budget, AtomicInteger left) {}

    private BudgetWatch(ApiClient client, String name, Consumer<String> onAllowing) {
      this.client = client;
      this.name = name;
      this.onAllowing = onAllowing;
    }

    /**
     * Follows no budget yet ({@link #follow}); {@code onAllowing} runs on a budget's watch thread.
     */
    public static BudgetWatch start(ApiClient client, String name, Consumer<String> onAllowing) {
      return new BudgetWatch(client, name, onAllowing);
    }

    /** Watches each of {@code keys} ({@code namespace/name}) not watched yet. */
    public synchronized void follow(Collection<String> keys) {
      if (client == null || closed) {
        return;
      }
      for (String key : keys) {
        int slash = key.indexOf('/');
        if (slash > 0 && !followed.containsKey(key)) {
          Followed f = new Followed(key.substring(0, slash), key.substring(slash + 1));
          followed.put(key, f);
          f.startThread();
        }
      }
    }

    /** The watch of one budget, whose events are this cluster's. */
    private final class Followed extends WatchLoop<V1PodDisruptionBudget> {
      private final String namespace;
      private final String budget;

      Followed(String namespace, String budget) {
        super(
            new RawApi(client),
            V1PodDisruptionBudget.class,
            null,
            "budget-watch-" + name + "/" + budget);
        this.namespace = namespace;
        this.budget = budget;
      }

      @Override
      Call list() throws ApiException {
        return new PolicyV1Api(api.client())
            .listNamespacedPodDisruptionBudget(namespace)
            .fieldSelector("metadata.name=" + budget)
            .buildCall(null);
      }

      @Override
      String relist() {
        return null;
      }

      @Override
      void seen(String type, V1PodDisruptionBudget object) {
        BudgetWatch.this.seen(type, object);
      }

      @Override
      boolean giveUp(Exception failure, int failures) {
        if (failure instanceof ApiException ae && ae.getCode() == 403) {
          // The guest identity may not watch budgets: refused pods wait for the retry timer.
          LOG.info(
              "budget watch refused (HTTP 403), refused evictions are retried on a timer budget={}",
              namespace + "/" + budget);
          return true;
        }
        LOG.debug(
            "budget watch failed, retrying failures={} reason={}", failures, describe(failure));
        return false;
      }
    }

    /** Allowed a disruption when last seen, not yet taken by a step since. */
    public boolean allows(String budget) {
      Seen seen = budgets.get(budget);
      return seen != null && seen.left().get() > 0;
    }

    public Set<String> selecting(V1Pod pod) {
      Set<String> names = new TreeSet<>();
      budgets.forEach(
          (key, seen) -> {
            if (seen.budget != null && selects(seen.budget, pod)) {
              names.add(key);
            }
          });
      return names;
    }

    private static boolean selects(V1PodDisruptionBudget budget, V1Pod pod) {
      return pod.getMetadata() != null
          && pod.getMetadata().getNamespace() != null
          && pod.getMetadata().getNamespace().equals(budget.getMetadata().getNamespace())
          && budget.getSpec() != null
          && LabelSelectors.matches(budget.getSpec().getSelector(), pod.getMetadata().getLabels());
    }

    public Optional<V1PodDisruptionBudget> lastSeen(String budget) {
      return Optional.ofNullable(budgets.get(budget)).map(seen -> seen.budget);
    }

    /** Takes up to {@code wanted} of the disruptions {@code budget} allows (all if not known). */
    public int take(String budget, int wanted) {
      Seen seen = budgets.get(budget);
      return seen == null
          ? wanted
          : Math.clamp(seen.left().getAndUpdate(l -> Math.max(0, l - wanted)), 0, wanted);
    }

    void seen(String type, V1PodDisruptionBudget budget) {
      String key = budget.getMetadata().getNamespace() + "/" + budget.getMetadata().getName();
      if ("DELETED".equals(type)) {
        // A budget gone refuses nothing any more (and selects no pod).
        budgets.put(key, new Seen(null, new AtomicInteger(Integer.MAX_VALUE)));
        onAllowing.accept(key);
        return;
      }
      int now = disruptionsAllowed(budget);
      // A new status counts the evictions it accepted: what was taken before is forgotten.
      budgets.put(key, new Seen(budget, new AtomicInteger(now)));
      if (now > 0) {
        onAllowing.accept(key);
      }
    }

    @Override
    public void close() {
      List<Followed> all;
      synchronized (this) {
        closed = true;
        all = List.copyOf(followed.values());
        followed.clear();
      }
      all.forEach(Followed::close);
    }

    /** As the eviction check: none while the status is older than the spec. */
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
}
