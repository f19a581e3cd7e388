package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drains a node the way {@code kubectl drain} does: cordon, list the node's pods, give each a
 * verdict (refusing the whole drain if any pod may not go), evict the others (or delete them), and
 * wait until they are gone. The evictions are sent by the controller's stepped engine ({@link
 * DrainStepper}); this class blocks between its steps. Faster than kubectl: evictions run
 * concurrently (bounded), and one watch on the node's pods replaces kubectl's per-pod polling.
 *
 * <p>Thread-safe: one instance can drain several nodes at once. It knows nothing about VMIs.
 */
public final class NodeDrainer {
  private static final Logger LOG = LoggerFactory.getLogger(NodeDrainer.class);

  private final RawApi api;
  private final Cordoner cordoner;
  private final Clock clock;

  public NodeDrainer(ApiClient client) {
    this(client, Clock.systemUTC());
  }

  NodeDrainer(ApiClient client, Clock clock) {
    this.api = new RawApi(Objects.requireNonNull(client, "client"));
    this.cordoner = new Cordoner(api);
    this.clock = clock;
  }

  /**
   * Cordons (or, with {@code desired} false, uncordons) the node as kubectl does under {@code
   * --dry-run}: a client dry run sends nothing, a server dry run sends the patch with {@code
   * dryRun=All}.
   *
   * @return true if the node changed (or, in a dry run, would change)
   * @throws NodeNotFoundException if there is no such node
   */
  public boolean setUnschedulable(String nodeName, boolean desired, DryRun dryRun)
      throws ApiException {
    boolean changed =
        cordoner.setUnschedulable(
            requireNode(nodeName), desired, Objects.requireNonNull(dryRun, "dryRun"));
    LOG.info(
        "node {} node={} changed={} dryRun={}",
        desired ? "cordon" : "uncordon",
        nodeName,
        changed,
        dryRun);
    return changed;
  }

  /**
   * The names of the nodes matching a label selector (kubectl's {@code -l}), sorted by name as the
   * API server lists them, page by page. The selector is checked by the server.
   */
  public List<String> nodesMatching(String labelSelector) throws ApiException {
    CoreV1Api core = new CoreV1Api(api.client());
    List<String> names = new ArrayList<>();
    String token = null;
    do {
      CoreV1Api.APIlistNodeRequest req = core.listNode().limit(DrainOptions.DEFAULT_CHUNK_SIZE);
      if (!labelSelector.isBlank()) {
        req = req.labelSelector(labelSelector);
      }
      if (token != null) {
        req = req._continue(token);
      }
      V1NodeList page = api.get(req.buildCall(null), V1NodeList.class);
      if (page.getItems() != null) {
        page.getItems().forEach(n -> names.add(n.getMetadata().getName()));
      }
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
    return names;
  }

  /**
   * Checks that every named node exists, before a command changes any of them (kubectl resolves all
   * its arguments first).
   *
   * @throws NodeNotFoundException for the first name that is not a node
   */
  public void requireNodes(List<String> nodeNames) throws ApiException {
    CoreV1Api core = new CoreV1Api(api.client());
    for (String name : nodeNames) {
      RawApi.Answer answer = api.execute(core.readNode(requireNode(name)).buildCall(null));
      if (answer.code() == 404) {
        throw new NodeNotFoundException(name);
      }
      if (!answer.ok()) {
        throw answer.toException();
      }
    }
  }

  /**
   * Cordons the node and evicts its pods, blocking until they are gone or the options' timeout
   * passes. A timeout, a pod that cannot be evicted, or a lost API server is reported in the
   * result; only a refusal (nothing evicted) and failures before any eviction (unknown node, cannot
   * list pods) throw. The evictions are the stepped engine's ({@link DrainStepper}), driven here
   * until the node is empty.
   *
   * @throws NodeNotFoundException if there is no such node
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted
   * @throws ApiException if cordoning, listing the pods or discovering eviction support failed
   */
  public DrainResult drain(String nodeName, DrainOptions options)
      throws ApiException, DrainRefusedException {
    requireNode(nodeName);
    Objects.requireNonNull(options, "options");
    long started = System.nanoTime();
    // As kubectl's --timeout: zero means no timeout.
    Deadline deadline =
        options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    // Every request of this drain ends by its deadline, however slowly the server answers.
    RawApi api = this.api.until(deadline);
    DrainProgressListener listener = options.progressListener();
    LOG.info("drain started node={} options={}", nodeName, options);
    // Cordon first, as kubectl does, so nothing new lands on the node while it is emptied.
    boolean cordoned = new Cordoner(api).setUnschedulable(nodeName, true, options.dryRun());
    BlockingDrain.tell("cordoned", () -> listener.cordoned(nodeName, cordoned));

    PodLister.Listing listing;
    try {
      listing = new PodLister(api).list(nodeName, options.podSelector(), options.chunkSize());
    } catch (ApiException e) {
      throw afterCordon(nodeName, cordoned, "listing its pods", e);
    }
    PodFilters filters = new PodFilters(options, new ApiDaemonSetLookup(api), clock);
    DrainPlan plan = DrainPlan.of(filters.inOrder(), listing.pods());
    if (plan.refused()) {
      DrainRefusedException refused =
          new DrainRefusedException(nodeName, plan.refusals(), cordoned);
      LOG.info("drain refused node={} reason={}", nodeName, refused.getMessage());
      throw refused;
    }
    BlockingDrain.tell(
        "planned", () -> listener.planned(plan.toEvictRefs(), plan.skipped(), plan.warningLines()));

    // kubectl retries a refused eviction at one fixed interval: no backoff beyond it.
    DrainMemory memory =
        new DrainMemory(options.evictionRetryInterval(), options.evictionRetryInterval());
    BlockingDrain drain = new BlockingDrain(api, nodeName, plan, memory, options, clock);
    if (options.dryRun() == DryRun.CLIENT) {
      drain.wouldAllGo();
    } else if (!plan.toEvict().isEmpty()) {
      try {
        drain.run(
            deadline,
            new V1PodList()
                .metadata(new V1ListMeta().resourceVersion(listing.resourceVersion()))
                .items(listing.pods()));
      } catch (ApiException e) {
        throw afterCordon(nodeName, cordoned, "discovering eviction support", e);
      }
    }
    DrainResult done = drain.result(cordoned, Duration.ofNanos(System.nanoTime() - started));
    LOG.info(
        "drain finished node={} complete={} summary={}",
        nodeName,
        done.isComplete(),
        done.summary());
    return done;
  }

  /** A failure after the node was cordoned: says so, since the node stays cordoned. */
  private static ApiException afterCordon(
      String node, boolean cordoned, String step, ApiException e) {
    String state =
        cordoned
            ? "node " + node + " was cordoned by this drain and stays cordoned"
            : "node " + node + " was already cordoned";
    LOG.warn(
        "drain failed node={} step={} state={} error={}", node, step, state, ApiStatus.describe(e));
    return new ApiException(
        "drain of node " + node + " failed " + step + " (" + state + "): " + ApiStatus.describe(e),
        e,
        e.getCode(),
        e.getResponseHeaders(),
        e.getResponseBody());
  }

  private static String requireNode(String nodeName) {
    if (nodeName == null || nodeName.isBlank()) {
      throw new IllegalArgumentException("node name must not be empty");
    }
    return nodeName;
  }
}
