package dev.capk.vmieviction.drain;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import okio.BufferedSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One watch on the PodDisruptionBudgets of a cluster (all namespaces), for the stepped drains whose
 * evictions a budget refused: {@code onAllowing} is called with a budget's {@code namespace/name}
 * whenever its status says it allows a disruption (and is current: {@code observedGeneration} not
 * behind {@code generation}, as the API server's eviction check requires), so a refused pod is
 * tried again as soon as its budget can allow it, not when a retry timer says. The timer stays the
 * fallback: a watch that fails is tried again (backoff up to 8 s) for as long as it is open, and
 * costs nothing but a later retry meanwhile.
 *
 * <p>Started without a resourceVersion, the watch first reports every budget as it is (so a budget
 * that allowed before the watch started is seen), then each change.
 */
public final class BudgetWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BudgetWatch.class);

  /** The server ends each watch after this; the watch is then resumed. */
  private static final int WATCH_SECONDS = 120;

  private final ApiClient client;
  private final Consumer<String> onAllowing;
  private final OkHttpClient watchHttp;
  private final Thread thread;

  /** Disruptions each budget allows now, by {@code namespace/name}, as last seen. */
  private final Map<String, Integer> allowed = new ConcurrentHashMap<>();

  private volatile boolean closed;
  private volatile Call current;
  private String resourceVersion;

  private BudgetWatch(ApiClient client, String name, Consumer<String> onAllowing) {
    this.client = client;
    this.onAllowing = onAllowing;
    // The caller's connection pool, auth and TLS; a watch is silent until something changes, so
    // not the client's short call timeout.
    this.watchHttp =
        client
            .getHttpClient()
            .newBuilder()
            .readTimeout(Duration.ofSeconds(WATCH_SECONDS + 30))
            .callTimeout(Duration.ZERO)
            .build();
    this.thread = new Thread(this::run, "budget-watch-" + name);
    this.thread.setDaemon(true);
  }

  /**
   * Starts watching the budgets of the cluster {@code client} reaches; {@code onAllowing} is called
   * on the watch's thread.
   *
   * @param name names the thread (the cluster, for thread dumps)
   */
  public static BudgetWatch start(ApiClient client, String name, Consumer<String> onAllowing) {
    BudgetWatch w = new BudgetWatch(client, name, onAllowing);
    w.thread.start();
    return w;
  }

  /** The budget {@code namespace/name} allowed a disruption when last seen. */
  public boolean allows(String budget) {
    Integer n = allowed.get(budget);
    return n != null && n > 0;
  }

  @Override
  public void close() {
    closed = true;
    Call c = current;
    if (c != null) {
      c.cancel();
    }
    thread.interrupt();
  }

  private void run() {
    int failures = 0;
    while (!closed) {
      try {
        watchOnce();
        failures = 0;
      } catch (Expired e) {
        resourceVersion = null;
      } catch (IOException | ApiException | RuntimeException e) {
        if (closed) {
          return;
        }
        if (e instanceof ApiException ae && ae.getCode() == 403) {
          // The guest identity may not watch budgets: refused pods wait for the retry timer.
          LOG.info("budget watch refused (HTTP 403), refused evictions are retried on a timer");
          return;
        }
        failures++;
        LOG.debug(
            "budget watch failed, retrying failures={} reason={}",
            failures,
            e instanceof ApiException ae ? ApiStatus.describe(ae) : e.getClass().getSimpleName());
        try {
          TimeUnit.MILLISECONDS.sleep(Math.min(8_000L, 250L << Math.min(5, failures - 1)));
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  /** The watch's resourceVersion is too old: start again from the budgets as they are. */
  private static final class Expired extends Exception {
    private static final long serialVersionUID = 1L;
  }

  private void watchOnce() throws IOException, ApiException, Expired {
    Call built =
        new PolicyV1Api(client)
            .listPodDisruptionBudgetForAllNamespaces()
            .watch(true)
            .allowWatchBookmarks(true)
            .resourceVersion(resourceVersion)
            .timeoutSeconds(WATCH_SECONDS)
            .buildCall(null);
    Call call = watchHttp.newCall(built.request());
    current = call;
    if (closed) {
      return;
    }
    try (Response response = call.execute()) {
      if (response.code() == 410) {
        throw new Expired();
      }
      if (!response.isSuccessful()) {
        String body = response.body() == null ? "" : response.body().string();
        throw new RawApi.Answer(response.code(), body, response.headers().toMultimap())
            .toException();
      }
      BufferedSource source = response.body().source();
      String line;
      while (!closed && (line = source.readUtf8Line()) != null) {
        if (!line.isBlank()) {
          handle(line);
        }
      }
    } finally {
      current = null;
    }
  }

  private void handle(String line) throws Expired, IOException {
    JsonObject event = JsonParser.parseString(line).getAsJsonObject();
    String type = event.get("type").getAsString();
    JsonElement object = event.get("object");
    if ("ERROR".equals(type)) {
      JsonObject status =
          object != null && object.isJsonObject() ? object.getAsJsonObject() : new JsonObject();
      if (status.has("code") && status.get("code").getAsInt() == 410) {
        throw new Expired();
      }
      throw new IOException("budget watch error");
    }
    if ("BOOKMARK".equals(type)) {
      resourceVersion =
          object.getAsJsonObject().getAsJsonObject("metadata").get("resourceVersion").getAsString();
      return;
    }
    V1PodDisruptionBudget budget = LenientJson.parse(object, V1PodDisruptionBudget.class);
    if (budget.getMetadata() == null) {
      return;
    }
    if (budget.getMetadata().getResourceVersion() != null) {
      resourceVersion = budget.getMetadata().getResourceVersion();
    }
    String key = budget.getMetadata().getNamespace() + "/" + budget.getMetadata().getName();
    if ("DELETED".equals(type)) {
      // A budget gone refuses nothing any more.
      allowed.remove(key);
      onAllowing.accept(key);
      return;
    }
    int now = disruptionsAllowed(budget);
    allowed.put(key, now);
    if (now > 0) {
      onAllowing.accept(key);
    }
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
