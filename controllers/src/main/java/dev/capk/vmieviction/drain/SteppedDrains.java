package dev.capk.vmieviction.drain;

import com.google.gson.reflect.TypeToken;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodFilters.DaemonSetLookup;
import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import dev.capk.vmieviction.drain.SteppedDrains.EvictionOutcome.Kind;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.kube.WatchListApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1APIResourceList;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Eviction;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.openapi.models.V1Preconditions;
import io.kubernetes.client.util.Watch;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.Type;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The drain engine: drains nodes one short step at a time, for callers that must not wait. A step
 * gives each pod its verdict as {@code kubectl drain} does, sends an eviction to each pod that is
 * due (concurrently, bounded, with the pod's UID as a precondition), and returns: it never waits
 * for a pod to leave or a budget to allow. The caller comes back when a watch shows pods leaving or
 * at {@link DrainStep#nextTry()}; {@link DrainMemory} carries the retry schedule between steps.
 *
 * <p>It keeps the controllers' drains, each under a key of theirs (a VMI, a NodeMaintenance): the
 * watch on the node's pods, whose cache the steps read, and the drain's memory, from {@link #pods}
 * to {@link #end}. The steps of one drain must not overlap.
 */
public final class SteppedDrains implements AutoCloseable {

  public record Drain(ApiClient client, String node, NodePodWatch watch, DrainMemory memory) {}

  /** Told, on the stepping thread, of each eviction before it goes and once it is answered. */
  interface Observer {
    Observer NONE = new Observer() {};

    default void sending(PodRef pod) {}

    default void answered(PodRef pod, EvictionOutcome outcome) {}
  }

  private final Duration baseRetry;
  private final Duration maxRetry;
  private final Map<String, Drain> drains = new ConcurrentHashMap<>();
  private final Executor evictions;
  private final Clock clock;

  /** Eviction support per client, by identity, forgotten with it (weak keys). */
  private final Map<ApiClient, CompletableFuture<Optional<String>>> evictionSupport =
      Collections.synchronizedMap(new WeakHashMap<>());

  /**
   * A virtual thread per eviction call, named {@code threadPrefix} and a number: a thousand drains
   * under way cost no thousand stacks.
   */
  public SteppedDrains(String threadPrefix, Duration baseRetry, Duration maxRetry) {
    this(
        Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name(threadPrefix, 0).factory()),
        Clock.systemUTC(),
        baseRetry,
        maxRetry);
  }

  /** {@code baseRetry}, the first wait after a refused eviction, is cut to {@code maxRetry}. */
  public SteppedDrains(Executor evictions, Clock clock, Duration baseRetry, Duration maxRetry) {
    this.baseRetry = baseRetry.compareTo(maxRetry) > 0 ? maxRetry : baseRetry;
    this.maxRetry = maxRetry;
    this.evictions = evictions;
    this.clock = clock;
  }

  /** Lists a node's pods by the caller's client (its bounds, counts). */
  @FunctionalInterface
  public interface PodList<X extends Exception> {
    V1PodList list() throws ApiException, X;
  }

  /** The pods a step drains, and its drain. */
  public record Pods(List<V1Pod> pods, Drain drain) {}

  /**
   * The drain under {@code key} of {@code node} through {@code client}, opened (its watch started,
   * calling {@code onPodsLeft} with the key) if there is none, or if its watch gave up or was for
   * another client or node; and the node's pods: the watch's cache once it has listed, else {@code
   * list}, from which a watch started here resumes (one list for both).
   */
  public <X extends Exception> Pods pods(
      String key,
      ApiClient client,
      String node,
      BiConsumer<String, String> onPodsLeft,
      PodList<X> list)
      throws ApiException, X {
    Drain current = drains.get(key);
    boolean usable =
        current != null
            && current.client == client
            && current.node.equals(node)
            && current.watch.failure().isEmpty();
    Optional<List<V1Pod>> watched = usable ? current.watch.pods() : Optional.empty();
    if (watched.isPresent()) {
      return new Pods(watched.get(), current);
    }
    V1PodList listed = list.list();
    List<V1Pod> pods = listed.getItems() == null ? List.of() : listed.getItems();
    if (usable) {
      return new Pods(pods, current);
    }
    Drain opened =
        new Drain(
            client,
            node,
            NodePodWatch.start(
                new RawApi(client), node, () -> onPodsLeft.accept(key, node), listed),
            current != null && current.node.equals(node)
                ? current.memory
                : new DrainMemory(baseRetry, maxRetry));
    Optional.ofNullable(drains.put(key, opened)).ifPresent(replaced -> replaced.watch.close());
    NodePodWatch.LOG.debug("pod watch opened key={} node={}", key, node);
    return new Pods(pods, opened);
  }

  public Optional<Drain> get(String key) {
    return Optional.ofNullable(drains.get(key));
  }

  public Optional<Drain> end(String key) {
    Optional<Drain> ended = Optional.ofNullable(drains.remove(key));
    ended.ifPresent(d -> d.watch.close());
    return ended;
  }

  public Set<String> keys() {
    return drains.keySet();
  }

  @Override
  public void close() {
    drains.values().forEach(d -> d.watch.close());
    drains.clear();
    if (evictions instanceof ExecutorService pool) {
      pool.shutdownNow();
    }
  }

  /** One step, bound by the options' timeout. */
  public DrainStep step(
      ApiClient client,
      String nodeName,
      List<V1Pod> podsOnNode,
      DrainOptions options,
      DrainMemory memory,
      BudgetWatch budgets)
      throws ApiException, DrainRefusedException {
    Deadline bound = options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    return step(client, nodeName, podsOnNode, options, memory, budgets, Observer.NONE, bound);
  }

  /**
   * One step. For the Ready pods of each budget {@code budgets} knows, it sends no more evictions
   * than the budget allows now: the others wait, as if refused, for the budget to allow or for
   * their timer; when the timer comes, one pod per budget is sent all the same (the known status
   * may be late). In a server dry run an accepted pod stays, so the caller decides it is done.
   * Every request ends by {@code bound}.
   *
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted by this step
   * @throws ApiException if eviction support could not be discovered
   */
  DrainStep step(
      ApiClient client,
      String nodeName,
      List<V1Pod> podsOnNode,
      DrainOptions options,
      DrainMemory memory,
      BudgetWatch budgets,
      Observer observer,
      Deadline bound)
      throws ApiException, DrainRefusedException {
    if (options.dryRun() == DryRun.CLIENT) {
      throw new IllegalArgumentException("a client dry run sends nothing: there is no step");
    }
    RawApi unbound = new RawApi(client);
    RawApi api = unbound.until(bound);
    // The lookup outlives this step (its answers are kept for the drain): not bound to this step.
    DrainPlan plan = memory.plan(unbound, nodeName, podsOnNode, options, clock);
    Instant now = clock.instant();
    Set<PodRef> present = new HashSet<>();
    List<V1Pod> due = new ArrayList<>();
    Map<PodRef, String> held = new LinkedHashMap<>();
    Set<String> probed = new HashSet<>();
    for (V1Pod pod : plan.toEvict()) {
      PodRef ref = PodRef.of(pod);
      present.add(ref);
      if (PodFilters.terminating(pod)
          || !memory.due(ref, now)
          || due.size() >= options.maxConcurrentEvictions()) {
        continue;
      }
      Optional<String> budget = limitingBudget(pod, budgets);
      if (budget.isEmpty()) {
        due.add(pod);
      } else if (budgets.take(budget.get(), 1) == 1) {
        probed.add(budget.get());
        due.add(pod);
      } else if (memory.timerDue(ref, now) && probed.add(budget.get())) {
        due.add(pod);
      } else {
        held.put(ref, budget.get());
      }
    }
    memory.keepOnly(present);
    held.forEach((ref, budget) -> memory.held(ref, Set.of(budget), now));
    if (!due.isEmpty() && memory.evictionVersion == null) {
      memory.evictionVersion =
          options.disableEviction() ? Optional.empty() : evictionVersion(api, bound);
    }
    Map<PodRef, EvictionOutcome> answers =
        StrandedEvictions.complete(
            api,
            options,
            plan.toEvict(),
            evict(api, options, memory, due, bound, observer),
            budgets,
            clock.instant(),
            bound);
    Map<PodRef, V1Pod> byRef = new HashMap<>();
    plan.toEvict().forEach(p -> byRef.put(PodRef.of(p), p));
    // Retries count from the answer, not from the step's start: an eviction an API server took
    // seconds to accept is not due again before the watch could show the pod leaving.
    Instant answered = clock.instant();
    answers.forEach(
        (ref, o) -> {
          // A 429 names its budgets; one that does not: those the budget watch knows.
          boolean unnamed = o.kind() == Kind.BLOCKED && o.budgets().isEmpty();
          memory.answered(
              ref, o, unnamed ? budgets.selecting(byRef.get(ref)) : o.budgets(), answered);
          observer.answered(ref, o);
        });
    return report(plan, memory, answers, now);
  }

  /**
   * The one known budget selecting the pod; none if several do (the eviction API answers those), or
   * if the pod is not Ready: an unhealthy pod may go whatever the budget allows.
   */
  private static Optional<String> limitingBudget(V1Pod pod, BudgetWatch budgets) {
    if (!ready(pod)) {
      return Optional.empty();
    }
    Set<String> selecting = budgets.selecting(pod);
    return selecting.size() == 1 ? Optional.of(selecting.iterator().next()) : Optional.empty();
  }

  private static boolean ready(V1Pod pod) {
    return pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /**
   * Whether and in which version the cluster serves evictions: asked once per client. Steps that
   * need it while one asks (a burst of evacuations) wait for that answer, no longer than for their
   * own request.
   */
  private Optional<String> evictionVersion(RawApi bounded, Deadline bound) throws ApiException {
    CompletableFuture<Optional<String>> mine = new CompletableFuture<>();
    CompletableFuture<Optional<String>> asked = evictionSupport.putIfAbsent(bounded.client(), mine);
    if (asked == null) {
      asked = mine;
      try {
        V1APIResourceList core =
            bounded.get(
                new CoreV1Api(bounded.client()).getAPIResources().buildCall(null),
                V1APIResourceList.class);
        mine.complete(evictionGroupVersion(core));
      } catch (ApiException | RuntimeException e) {
        // A failed discovery is not kept: the next step asks again.
        evictionSupport.remove(bounded.client(), mine);
        mine.completeExceptionally(e);
      }
    }
    Duration wait = bound.none() ? Evictor.EVICTION_TIMEOUT : bound.remaining();
    try {
      return asked.get(Math.max(0, wait.toMillis()), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ApiException cause) {
        throw cause;
      }
      throw new ApiException(e.getCause());
    } catch (TimeoutException e) {
      throw new ApiException(
          new InterruptedIOException("the deadline passed while discovery was asked"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiException(e);
    }
  }

  private Map<PodRef, EvictionOutcome> evict(
      RawApi api,
      DrainOptions options,
      DrainMemory memory,
      List<V1Pod> due,
      Deadline bound,
      Observer observer) {
    if (due.isEmpty()) {
      return Map.of();
    }
    Evictor evictor = new Evictor(api, options, memory.evictionVersion.orElse(null));
    Map<PodRef, CompletableFuture<EvictionOutcome>> sent = new LinkedHashMap<>();
    for (V1Pod pod : due) {
      PodRef ref = PodRef.of(pod);
      observer.sending(ref);
      sent.put(
          ref,
          CompletableFuture.supplyAsync(() -> evictor.evictOrDelete(ref, bound), evictions)
              .exceptionally(e -> EvictionOutcome.unreachable("unexpected error: " + e)));
    }
    Map<PodRef, EvictionOutcome> answers = new LinkedHashMap<>();
    // Each request is bounded: this join ends.
    sent.forEach((ref, f) -> answers.put(ref, f.join()));
    return answers;
  }

  private static DrainStep report(
      DrainPlan plan, DrainMemory memory, Map<PodRef, EvictionOutcome> answers, Instant now) {
    List<PodRef> planned = new ArrayList<>();
    List<PodRef> pending = new ArrayList<>();
    List<PodRef> terminating = new ArrayList<>();
    Map<PodRef, Set<String>> blocking = new LinkedHashMap<>();
    Map<PodRef, String> failed = new LinkedHashMap<>();
    Set<PodRef> denied = new HashSet<>();
    Map<PodRef, String> waiting = new LinkedHashMap<>();
    Instant next = null;
    for (V1Pod pod : plan.toEvict()) {
      PodRef ref = PodRef.of(pod);
      planned.add(ref);
      EvictionOutcome answer = answers.get(ref);
      if (answer != null
          && (answer.kind() == EvictionOutcome.Kind.GONE
              || answer.kind() == EvictionOutcome.Kind.REPLACED)) {
        continue;
      }
      pending.add(ref);
      if (PodFilters.terminating(pod)) {
        terminating.add(ref);
        waiting.put(ref, whyTerminating(pod));
        continue;
      }
      DrainMemory.PodState s = memory.state(ref);
      if (s == null) {
        next = earliest(next, now);
        waiting.put(ref, "eviction not sent yet");
        continue;
      }
      next = earliest(next, s.due);
      waiting.put(ref, s.why(ref));
      switch (s.waiting) {
        case ACCEPTED -> terminating.add(ref);
        case BLOCKED -> blocking.put(ref, s.budgets);
        case FAILED -> {
          failed.put(ref, s.failure);
          if (s.denied) {
            denied.add(ref);
          }
        }
        default -> {}
      }
    }
    return new DrainStep(
        pending.isEmpty(),
        memory.evictedCount(),
        answers.size(),
        planned,
        pending,
        terminating,
        blocking,
        failed,
        denied,
        plan.skipped(),
        Optional.ofNullable(next),
        waiting);
  }

  private static Instant earliest(Instant a, Instant b) {
    return a == null || b.isBefore(a) ? b : a;
  }

  /**
   * Sends one eviction or, when evictions are off, one deletion, with the pod's UID as a
   * precondition (never a StatefulSet pod's successor), and classifies the answer.
   *
   * <p>An eviction gets time to finish: the API server records the pod in its budget before it
   * deletes it, and a client that gives up in between cancels the deletion but not the record, so
   * the budget refuses that pod for two minutes. Evictions wait up to {@link #EVICTION_TIMEOUT},
   * never past the drain's deadline.
   */
  static final class Evictor {
    private final RawApi api;
    private final CoreV1Api core;
    private final DrainOptions options;
    static final Duration EVICTION_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MIN_EVICTION_TIMEOUT = Duration.ofSeconds(1);

    /** Null: delete instead. */
    private final String evictionGroupVersion;

    private final OkHttpClient evictionHttp;

    Evictor(RawApi api, DrainOptions options, String evictionGroupVersion) {
      this.api = api;
      this.core = new CoreV1Api(api.client());
      this.options = options;
      this.evictionGroupVersion = evictionGroupVersion;
      this.evictionHttp =
          api.client()
              .getHttpClient()
              .newBuilder()
              .readTimeout(EVICTION_TIMEOUT)
              .writeTimeout(EVICTION_TIMEOUT)
              .build();
    }

    EvictionOutcome evictOrDelete(PodRef pod, Deadline deadline) {
      try {
        okhttp3.Call built =
            evictionGroupVersion != null
                ? core.createNamespacedPodEviction(
                        pod.name(),
                        pod.namespace(),
                        new V1Eviction()
                            .apiVersion(evictionGroupVersion)
                            .kind("Eviction")
                            .metadata(
                                new V1ObjectMeta().name(pod.name()).namespace(pod.namespace()))
                            .deleteOptions(deleteOptions(pod)))
                    .buildCall(null)
                : core.deleteNamespacedPod(pod.name(), pod.namespace())
                    .body(deleteOptions(pod))
                    .dryRun(options.dryRun() == DryRun.SERVER ? "All" : null)
                    .buildCall(null);
        okhttp3.Call call = evictionHttp.newCall(built.request());
        call.timeout()
            .timeout(
                Math.max(MIN_EVICTION_TIMEOUT.toNanos(), deadline.cap(EVICTION_TIMEOUT).toNanos()),
                TimeUnit.NANOSECONDS);
        RawApi.Answer answer = api.execute(call);
        return EvictionOutcome.classify(answer.code(), answer.body(), answer.headers());
      } catch (ApiException e) {
        return EvictionOutcome.unreachable(RawApi.describe(e));
      }
    }

    private V1DeleteOptions deleteOptions(PodRef pod) {
      V1DeleteOptions o = new V1DeleteOptions();
      if (options.gracePeriodSeconds() >= 0) {
        o.setGracePeriodSeconds((long) options.gracePeriodSeconds());
      }
      if (pod.uid() != null) {
        o.setPreconditions(new V1Preconditions().uid(pod.uid()));
      }
      if (options.dryRun() == DryRun.SERVER) {
        o.setDryRun(List.of("All"));
      }
      return o;
    }
  }

  public record EvictionOutcome(
      Kind kind, String message, Set<String> budgets, long retryAfterSeconds) {
    public enum Kind {
      /** The server accepted the eviction (or deletion); the pod is going. */
      ACCEPTED,
      /** 404: the pod is already gone. */
      GONE,
      /** 409 on the UID precondition: a new pod has the name; the one we meant is gone. */
      REPLACED,
      /** 429 from a PodDisruptionBudget: retry later. */
      BLOCKED,
      /** 429 from API priority and fairness: the server is busy, retry soon. */
      THROTTLED,
      /** 403 NamespaceTerminating: the namespace is being deleted; the eviction API refuses. */
      NAMESPACE_TERMINATING,
      /** 500: several budgets select the pod, which the eviction API cannot handle. */
      MULTIPLE_BUDGETS,
      /** Connection failure, timeout, or a 5xx: worth a few retries. */
      TRANSIENT,
      /** 401/403 other than NamespaceTerminating: we may not evict (or delete) the pod. */
      FORBIDDEN,
      /** Anything else (invalid, unexpected...): retrying cannot help. */
      FAILED
    }

    static final String NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating";

    static final String DISRUPTION_BUDGET_CAUSE = "DisruptionBudget";

    private static final Pattern BUDGET_NAME =
        Pattern.compile("(?i)disruption budget \"?([a-z0-9][-a-z0-9.]*[a-z0-9]|[a-z0-9])\"?");

    public EvictionOutcome {
      message = message == null ? "" : message;
      budgets = Set.copyOf(budgets);
    }

    static EvictionOutcome accepted() {
      return new EvictionOutcome(Kind.ACCEPTED, "", Set.of(), 0);
    }

    /** No HTTP answer at all. */
    static EvictionOutcome unreachable(String message) {
      return new EvictionOutcome(Kind.TRANSIENT, message, Set.of(), 0);
    }

    public static EvictionOutcome classify(
        int code, String body, Map<String, List<String>> headers) {
      if (code >= 200 && code < 300) {
        return accepted();
      }
      RawApi.Status status = RawApi.Status.parse(body);
      String msg = status.message().isEmpty() ? "HTTP " + code : status.message();
      String lower = msg.toLowerCase(Locale.ROOT);
      Set<String> budgets = code == 429 ? budgetNames(status) : Set.of();
      return switch (code) {
        case 404 -> of(Kind.GONE, msg);
        // Evictions and deletions carry a UID precondition: its failure means the pod was replaced.
        case 409 ->
            of(
                lower.contains("precondition") || lower.contains("uid")
                    ? Kind.REPLACED
                    : Kind.TRANSIENT,
                msg);
        case 429 ->
            !budgets.isEmpty()
                    || status.hasCause(DISRUPTION_BUDGET_CAUSE)
                    || lower.contains("disruption budget")
                ? new EvictionOutcome(Kind.BLOCKED, msg, budgets, 0)
                : new EvictionOutcome(Kind.THROTTLED, msg, Set.of(), retryAfter(headers));
        case 403 ->
            of(
                status.hasCause(NAMESPACE_TERMINATING_CAUSE)
                    ? Kind.NAMESPACE_TERMINATING
                    : Kind.FORBIDDEN,
                msg);
        case 401 -> of(Kind.FORBIDDEN, msg);
        case 500 ->
            of(
                lower.contains("more than one poddisruptionbudget")
                        || lower.contains("multiple poddisruptionbudgets")
                    ? Kind.MULTIPLE_BUDGETS
                    : Kind.TRANSIENT,
                msg);
        case 408, 502, 503, 504 -> of(Kind.TRANSIENT, msg);
        default -> of(code > 500 ? Kind.TRANSIENT : Kind.FAILED, "HTTP " + code + ": " + msg);
      };
    }

    /** Budget names from a 429's causes ("The disruption budget web-pdb needs 2 healthy..."). */
    static Set<String> budgetNames(RawApi.Status status) {
      return status.causes().stream()
          .filter(c -> DISRUPTION_BUDGET_CAUSE.equals(c.getReason()))
          .map(c -> BUDGET_NAME.matcher(String.valueOf(c.getMessage())))
          .filter(Matcher::find)
          .map(m -> m.group(1))
          .collect(Collectors.toCollection(LinkedHashSet::new));
    }

    private static long retryAfter(Map<String, List<String>> headers) {
      try {
        return header(headers, "Retry-After")
            .map(v -> Math.max(0, Math.min(30, Long.parseLong(v.trim()))))
            .orElse(1L);
      } catch (NumberFormatException e) {
        return 1; // An HTTP date: the default.
      }
    }

    static Optional<String> header(Map<String, List<String>> headers, String name) {
      return headers == null
          ? Optional.empty()
          : headers.entrySet().stream()
              .filter(e -> name.equalsIgnoreCase(e.getKey()) && e.getValue() != null)
              .flatMap(e -> e.getValue().stream())
              .findFirst();
    }

    private static EvictionOutcome of(Kind kind, String message) {
      return new EvictionOutcome(kind, message, Set.of(), 0);
    }
  }

  /** The group/version serving pods/eviction, as kubectl discovers it; empty: delete instead. */
  static Optional<String> evictionGroupVersion(V1APIResourceList list) {
    return list.getResources().stream()
        .filter(r -> "pods/eviction".equals(r.getName()) && "Eviction".equals(r.getKind()))
        .filter(r -> r.getGroup() != null && !r.getGroup().isEmpty())
        .filter(r -> r.getVersion() != null && !r.getVersion().isEmpty())
        .map(r -> r.getGroup() + "/" + r.getVersion())
        .findFirst();
  }

  /**
   * Why a pod being deleted is still on the node, in words an admin can act on: its finalizers hold
   * it (no controller removed them yet), or else its kubelet has not confirmed the deletion.
   */
  static String whyTerminating(V1Pod pod) {
    V1ObjectMeta m = pod.getMetadata();
    List<String> finalizers =
        m == null || m.getFinalizers() == null ? List.of() : m.getFinalizers();
    if (!finalizers.isEmpty()) {
      return "terminating behind finalizer"
          + (finalizers.size() == 1 ? " " : "s ")
          + String.join(", ", finalizers);
    }
    Long grace = m == null ? null : m.getDeletionGracePeriodSeconds();
    return grace == null
        ? "terminating, deletion not yet confirmed by its kubelet"
        : "terminating (grace period " + grace + "s), deletion not yet confirmed by its kubelet";
  }

  /**
   * One watch on a virtual thread of its own: it resumes from the last resourceVersion seen
   * (objects and bookmarks), lists afresh after a 410, and backs off from 0.25 s to 8 s after a
   * failure. Not client-java's informers: each runs several platform threads, and the drains need
   * many differently filtered watches.
   */
  abstract static class WatchLoop<T extends KubernetesObject> implements AutoCloseable {

    /** The server ends each watch after this; the watch is then resumed. */
    static final int WATCH_SECONDS = 120;

    /** Null: never started (fed by hand, tests). */
    final RawApi api;

    private final Type responseType;
    private final OkHttpClient watchHttp;
    private final Thread thread;
    private volatile boolean closed;
    private volatile Call call;
    private String resourceVersion;

    /** No watch accepted since the last failed try: the server is not reached now. */
    volatile boolean failing;

    /** {@code resourceVersion}: where the first watch starts; null: {@link #relist} first. */
    WatchLoop(RawApi api, Class<T> type, String resourceVersion, String threadName) {
      this.api = api;
      this.responseType = TypeToken.getParameterized(Watch.Response.class, type).getType();
      this.resourceVersion = resourceVersion;
      // The caller's pool, auth and TLS, without its short call timeout: a watch is often silent.
      this.watchHttp =
          api == null
              ? null
              : api.client()
                  .getHttpClient()
                  .newBuilder()
                  .readTimeout(Duration.ofSeconds(WATCH_SECONDS + 30))
                  .callTimeout(Duration.ZERO)
                  .build();
      this.thread = Thread.ofVirtual().name(threadName).unstarted(this::run);
    }

    /** The list request the watch is made of. */
    abstract Call list() throws ApiException;

    /**
     * No resourceVersion to resume from: list, report the full state, return the list's version
     * (null: the watch sends the state).
     */
    abstract String relist() throws ApiException;

    abstract void seen(String type, T object);

    /** {@code failures} in a row since a watch was accepted: true ends the loop. */
    abstract boolean giveUp(Exception failure, int failures);

    /**
     * True: with no resourceVersion to resume from, the state comes as the watch's first events (a
     * streaming list: {@code sendInitialEvents}, Kubernetes 1.27 and later with the WatchList
     * feature, on by default in current releases), one request instead of a list and a watch;
     * {@link #stateStarts} and {@link #stateComplete} frame it. A server that refuses it, or does
     * not end the state within {@link #INITIAL_EVENTS_SECONDS}, is listed instead ({@link #relist})
     * from then on.
     */
    boolean streamsState() {
      return false;
    }

    /** A streamed state begins: what is kept is no longer current until {@link #stateComplete}. */
    void stateStarts() {}

    /** Every object of the streamed state was {@link #seen}. */
    void stateComplete() {}

    /** A streaming list's state ends within this, or the server does not stream it. */
    static final int INITIAL_EVENTS_SECONDS = 5;

    /** The server refused or ignored a streaming list: {@link #relist} instead. */
    private boolean streamRefused;

    /** The watch under way streams the state, which has not ended yet. */
    private boolean streaming;

    /** Asked before each watch request: false ends the loop. */
    boolean wanted() {
      return true;
    }

    void startThread() {
      // Watch events are decoded by the client's Gson: without the strict validators.
      LenientJson.install();
      thread.start();
    }

    @Override
    public void close() {
      closed = true;
      Call c = call;
      if (c != null) {
        c.cancel();
      }
      thread.interrupt();
    }

    private void run() {
      int failures = 0;
      while (!closed && wanted()) {
        try {
          streaming = resourceVersion == null && streamsState() && !streamRefused;
          if (streaming) {
            stateStarts();
          } else if (resourceVersion == null) {
            resourceVersion = relist();
          }
          watchOnce();
          if (streaming) {
            // The watch ended without the state's end: the server ignored the request.
            streamRefused = true;
            resourceVersion = null;
            continue;
          }
          failures = 0;
        } catch (ApiException | RuntimeException e) {
          if (closed) {
            return;
          }
          if (streaming) {
            // A state cut short is no state: the next try starts it again.
            resourceVersion = null;
            if (e instanceof ApiException ae && WatchListApi.refusesStreaming(ae)) {
              // The WatchList feature is off there: list instead, at once.
              streamRefused = true;
              continue;
            }
          }
          if (e instanceof ApiException ae && ae.getCode() == 410 && resourceVersion != null) {
            resourceVersion = null;
            continue;
          }
          // A watch that was up before it broke starts a new count.
          failures = failing ? failures + 1 : 1;
          failing = true;
          if (giveUp(e, failures)) {
            return;
          }
          try {
            TimeUnit.MILLISECONDS.sleep(Math.min(8_000L, 250L << Math.min(5, failures - 1)));
          } catch (InterruptedException ie) {
            return;
          }
        }
      }
    }

    /** One watch request, read to its end. */
    private void watchOnce() throws ApiException {
      Request list = list().request();
      HttpUrl.Builder url =
          list.url()
              .newBuilder()
              .addQueryParameter("watch", "true")
              .addQueryParameter("allowWatchBookmarks", "true");
      if (streaming) {
        url.addQueryParameter("sendInitialEvents", "true")
            .addQueryParameter("resourceVersionMatch", "NotOlderThan")
            .addQueryParameter("timeoutSeconds", String.valueOf(INITIAL_EVENTS_SECONDS));
      } else {
        url.addQueryParameter("timeoutSeconds", String.valueOf(WATCH_SECONDS));
      }
      if (resourceVersion != null) {
        url.addQueryParameter("resourceVersion", resourceVersion);
      }
      Call c = watchHttp.newCall(list.newBuilder().url(url.build()).build());
      api.bound(c);
      call = c;
      if (closed) {
        return;
      }
      try (Watch<T> watch = Watch.createWatch(api.client(), c, responseType)) {
        failing = false;
        while (!closed && watch.hasNext()) {
          handle(watch.next());
        }
      } catch (IOException e) {
        throw new ApiException(e);
      } finally {
        call = null;
      }
    }

    private void handle(Watch.Response<T> event) throws ApiException {
      if ("ERROR".equals(event.type)) {
        int code =
            event.status == null || event.status.getCode() == null ? 0 : event.status.getCode();
        throw new ApiException(
            code, "watch error: " + (event.status == null ? "" : event.status.getReason()));
      }
      T object = event.object;
      if (object == null || object.getMetadata() == null) {
        return;
      }
      if (object.getMetadata().getResourceVersion() != null) {
        resourceVersion = object.getMetadata().getResourceVersion();
      }
      if (!"BOOKMARK".equals(event.type)) {
        seen(event.type, object);
      } else if (streaming && WatchListApi.endsState(object)) {
        streaming = false;
        stateComplete();
      }
    }

    /** For a log line: the API's status, or the failure's kind (no server text). */
    static String describe(Exception failure) {
      return failure instanceof ApiException ae
          ? RawApi.describe(ae)
          : failure.getClass().getSimpleName();
    }
  }

  /**
   * What a drain remembers between its steps: when each pod that could not go yet is due again, and
   * why it waits. No I/O; losing it (a restart) only means due pods are tried again at once.
   *
   * <p>A refused pod waits kubectl's retry interval, doubling per further refusal up to {@code
   * maxRetry}: quick while a rolling budget frees a slot, cheap while a budget never allows
   * anything. Not thread-safe: a work queue never hands one key to two workers at once.
   */
  public static final class DrainMemory {

    /** Transient failures in a row before a pod is reported failed: about 30 s of outage. */
    static final int MAX_TRANSIENT_FAILURES = 10;

    static final class PodState {
      /** What its last eviction came to (any failure for good: FAILED). */
      Kind waiting;

      Instant due;
      int refusals;
      int transientFailures;
      Set<String> budgets = Set.of();
      String failure;
      boolean denied;

      /** A budget that refused it allows a disruption again: due before its timer. */
      boolean woken;

      /** What the pod's last eviction came to, in words an admin can act on. */
      String why(PodRef pod) {
        return switch (waiting) {
          case ACCEPTED -> "evicted, its deletion not seen yet";
          case BLOCKED ->
              budgets.isEmpty()
                  ? "eviction refused by a PodDisruptionBudget"
                  : "eviction refused by PodDisruptionBudget"
                      + (budgets.size() == 1 ? " " : "s ")
                      // A budget lives in its pod's namespace: named as kubectl users know it.
                      + budgets.stream()
                          .map(b -> b.contains("/") ? b : pod.namespace() + "/" + b)
                          .sorted()
                          .collect(Collectors.joining(", "));
          case THROTTLED -> "eviction throttled by the API server (429 with Retry-After), retrying";
          case NAMESPACE_TERMINATING -> "eviction refused: its namespace is being deleted";
          case TRANSIENT -> "eviction failed, retrying" + (failure == null ? "" : ": " + failure);
          default ->
              // FAILED: a denial's text says what was denied ("create pods/eviction denied: ...").
              denied ? failure : "eviction failed: " + failure;
        };
      }
    }

    private final Duration baseRetry;
    private final Duration maxRetry;
    private final Map<PodRef, PodState> pods = new HashMap<>();
    private final Set<PodRef> evicted = new TreeSet<>();

    /** The eviction API version ("policy/v1"; empty: deletions); null until discovered. */
    Optional<String> evictionVersion;

    private DaemonSetLookup daemonSets;

    public DrainMemory(Duration baseRetry, Duration maxRetry) {
      if (baseRetry.isNegative() || baseRetry.isZero() || maxRetry.compareTo(baseRetry) < 0) {
        throw new IllegalArgumentException(
            "need 0 < baseRetry <= maxRetry, got " + baseRetry + ", " + maxRetry);
      }
      this.baseRetry = baseRetry;
      this.maxRetry = maxRetry;
    }

    /** Its timer came, or its budget woke it. */
    boolean due(PodRef pod, Instant now) {
      PodState s = pods.get(pod);
      return s == null || s.woken || !now.isBefore(s.due);
    }

    /** Its timer came (not a budget's wake), or it was never tried. */
    boolean timerDue(PodRef pod, Instant now) {
      PodState s = pods.get(pod);
      return s == null || !now.isBefore(s.due);
    }

    PodState state(PodRef pod) {
      return pods.get(pod);
    }

    void keepOnly(Set<PodRef> present) {
      pods.keySet().retainAll(present);
    }

    /**
     * What the pod's eviction came to: gone, or when it is due again and why it waits ({@code
     * budgets}: those that refused it).
     */
    void answered(PodRef pod, EvictionOutcome o, Set<String> budgets, Instant now) {
      Kind kind = o.kind();
      if (kind == Kind.GONE || kind == Kind.REPLACED || kind == Kind.ACCEPTED) {
        evicted.add(pod);
        pods.remove(pod);
        if (kind != Kind.ACCEPTED) {
          return;
        }
      }
      PodState s =
          kind == Kind.BLOCKED || kind == Kind.NAMESPACE_TERMINATING
              ? waitFor(pod, kind, budgets)
              : pods.computeIfAbsent(pod, p -> new PodState());
      s.woken = false;
      switch (kind) {
        case ACCEPTED -> {
          s.waiting = kind;
          s.due = now.plus(baseRetry);
        }
        case BLOCKED, NAMESPACE_TERMINATING -> s.due = now.plus(refusalWait(s.refusals++));
        case THROTTLED -> {
          s.waiting = kind;
          s.due = now.plusSeconds(Math.max(1, o.retryAfterSeconds()));
        }
        case TRANSIENT -> {
          s.transientFailures++;
          s.failure = o.message();
          s.due = now.plusMillis(Math.min(5_000L, 200L << Math.min(20, s.transientFailures - 1)));
          s.waiting = s.transientFailures > MAX_TRANSIENT_FAILURES ? Kind.FAILED : kind;
        }
        default -> { // failed: reported, and tried again after the longest wait
          s.waiting = Kind.FAILED;
          s.denied = kind == Kind.FORBIDDEN;
          s.failure =
              switch (kind) {
                case MULTIPLE_BUDGETS ->
                    "more than one PodDisruptionBudget selects pod "
                        + pod
                        + ", which the eviction API does not support: "
                        + o.message();
                case FORBIDDEN ->
                    (evictionVersion != null && evictionVersion.isEmpty()
                            ? "delete pods"
                            : "create pods/eviction")
                        + " denied: "
                        + o.message();
                default -> o.message();
              };
          s.due = now.plus(maxRetry);
        }
      }
    }

    /** Not sent, its budget allowing nothing now: waits as if refused. */
    void held(PodRef pod, Set<String> budgets, Instant now) {
      PodState s = waitFor(pod, Kind.BLOCKED, budgets);
      if (s.due == null || !now.isBefore(s.due)) {
        s.due = now.plus(refusalWait(s.refusals++));
      }
    }

    private PodState waitFor(PodRef pod, Kind why, Set<String> budgets) {
      PodState s = pods.computeIfAbsent(pod, p -> new PodState());
      s.waiting = why;
      s.transientFailures = 0;
      s.failure = null;
      s.denied = false;
      s.budgets = Set.copyOf(budgets);
      s.woken = false;
      return s;
    }

    /**
     * The budgets {@code namespace/name} allow a disruption now: the pods they refused are due at
     * once (their refusal count and timer stay, so a budget that refuses again backs off as
     * before).
     */
    public void budgetsAllow(Set<String> budgets) {
      pods.forEach(
          (pod, s) -> {
            if (s.waiting == Kind.BLOCKED
                && s.budgets.stream()
                    .anyMatch(
                        b -> budgets.contains(b.contains("/") ? b : pod.namespace() + "/" + b))) {
              s.woken = true;
            }
          });
    }

    Duration refusalWait(int earlierRefusals) {
      Duration wait = baseRetry.multipliedBy(1L << Math.min(earlierRefusals, 30));
      return wait.compareTo(maxRetry) > 0 ? maxRetry : wait;
    }

    public int evictedCount() {
      return evicted.size();
    }

    boolean usingEviction(DrainOptions options) {
      return evictionVersion != null ? evictionVersion.isPresent() : !options.disableEviction();
    }

    /**
     * kubectl's verdicts on the node's pods, refused if one may not go; DaemonSets are looked up
     * through {@code api} by the drain's first plan, once per DaemonSet for the drain.
     */
    DrainPlan plan(RawApi api, String node, List<V1Pod> pods, DrainOptions options, Clock clock)
        throws DrainRefusedException {
      if (daemonSets == null) {
        daemonSets = PodFilters.daemonSets(api);
      }
      DrainPlan plan = DrainPlan.of(new PodFilters(options, daemonSets, clock).inOrder(), pods);
      if (plan.refused()) {
        throw new DrainRefusedException(node, plan.refusals());
      }
      return plan;
    }
  }

  /**
   * The pods bound to one node, kept by one list and one watch (not kubectl's GET per pod per
   * second). {@code onPodsLeft} runs whenever pods leave the node (or the watch gave up), and only
   * then: a drain whose pods stay (a budget refuses) is not woken for nothing.
   */
  public static final class NodePodWatch extends WatchLoop<V1Pod> {
    static final Logger LOG = LoggerFactory.getLogger(NodePodWatch.class);

    /** Failures in a row (~30 s) before it gives up. */
    private static final int MAX_FAILURES = 9;

    private final String node;
    private final Runnable onPodsLeft;
    private final Map<String, V1Pod> pods = new LinkedHashMap<>();
    private boolean listed;
    private String failure;

    /** A null {@code api}: fed by hand, for tests. */
    NodePodWatch(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
      super(api, V1Pod.class, resourceVersion(seed), "drain-watch-" + node);
      this.node = node;
      this.onPodsLeft = onPodsLeft;
      if (resourceVersion(seed) != null) {
        if (seed.getItems() != null) {
          seed.getItems().forEach(p -> pods.put(key(p), p));
        }
        listed = true;
      }
    }

    private static String resourceVersion(V1PodList list) {
      return list == null || list.getMetadata() == null
          ? null
          : list.getMetadata().getResourceVersion();
    }

    public static NodePodWatch start(ApiClient client, String node, Runnable onPodsLeft) {
      return start(new RawApi(client), node, onPodsLeft, null);
    }

    /** Resuming from {@code seed}, the caller's list (null: the watch lists itself). */
    static NodePodWatch start(RawApi api, String node, Runnable onPodsLeft, V1PodList seed) {
      NodePodWatch w = new NodePodWatch(api, node, onPodsLeft, seed);
      w.startThread();
      return w;
    }

    /** Empty until the first list arrived, and after the watch gave up. */
    public synchronized Optional<List<V1Pod>> pods() {
      if (!listed || failure != null) {
        return Optional.empty();
      }
      return Optional.of(new ArrayList<>(pods.values()));
    }

    public synchronized Optional<String> failure() {
      return Optional.ofNullable(failure);
    }

    @Override
    Call list() throws ApiException {
      return new CoreV1Api(api.client())
          .listPodForAllNamespaces()
          .fieldSelector("spec.nodeName=" + node)
          .buildCall(null);
    }

    @Override
    String relist() throws ApiException {
      V1PodList listed = listPods(api, node, "", DrainOptions.DEFAULT_CHUNK_SIZE);
      LOG.debug("pods listed node={} pods={}", node, listed.getItems().size());
      relisted(listed.getItems());
      return listed.getMetadata().getResourceVersion();
    }

    @Override
    void seen(String type, V1Pod pod) {
      boolean deleted = "DELETED".equals(type);
      synchronized (this) {
        if (deleted) {
          pods.remove(key(pod));
        } else {
          pods.put(key(pod), pod);
        }
      }
      if (deleted) {
        onPodsLeft.run();
      }
    }

    @Override
    boolean giveUp(Exception failure, int failures) {
      String reason = describe(failure);
      if (failures >= MAX_FAILURES) {
        LOG.warn("pod watch gave up node={} failures={} reason={}", node, failures, reason);
        watchFailed("lost the watch on the pods of node " + node + ": " + reason);
        return true;
      }
      LOG.debug("pod watch failed, retrying node={} failures={} reason={}", node, failures, reason);
      return false;
    }

    void relisted(List<V1Pod> current) {
      boolean left;
      synchronized (this) {
        Map<String, V1Pod> now = new LinkedHashMap<>();
        current.forEach(p -> now.put(key(p), p));
        // The first list says nothing left unless the node is empty (pods gone before it are then
        // all gone: what the drain waits for); a later one, when a pod known before is missing.
        left = now.isEmpty() || (listed && !now.keySet().containsAll(pods.keySet()));
        pods.clear();
        pods.putAll(now);
        listed = true;
      }
      if (left) {
        onPodsLeft.run();
      }
    }

    void watchFailed(String reason) {
      synchronized (this) {
        failure = reason;
      }
      onPodsLeft.run();
    }

    private static String key(V1Pod pod) {
      return PodRef.of(pod).toString();
    }
  }

  /**
   * All pods on {@code node} matching {@code labelSelector} (empty: all), page by page, as one
   * snapshot a watch can resume from. A list slower than its continue token's life restarts.
   */
  public static V1PodList listPods(RawApi api, String node, String labelSelector, int chunkSize)
      throws ApiException {
    CoreV1Api core = new CoreV1Api(api.client());
    V1PodList all = new V1PodList().metadata(new V1ListMeta()).items(new ArrayList<>());
    String token = null;
    for (int restarts = 0; ; ) {
      V1PodList page;
      try {
        page =
            api.get(
                core.listPodForAllNamespaces()
                    .fieldSelector("spec.nodeName=" + node)
                    .labelSelector(labelSelector.isEmpty() ? null : labelSelector)
                    .limit(chunkSize > 0 ? chunkSize : null)
                    ._continue(token)
                    .buildCall(null),
                V1PodList.class);
      } catch (ApiException e) {
        if (e.getCode() != 410 || restarts++ >= 3) {
          throw e;
        }
        // 410 Expired: the snapshot behind the continue token is gone; start a fresh one.
        all = new V1PodList().metadata(new V1ListMeta()).items(new ArrayList<>());
        token = null;
        continue;
      }
      if (page.getItems() != null) {
        all.getItems().addAll(page.getItems());
      }
      if (all.getMetadata().getResourceVersion() == null && page.getMetadata() != null) {
        all.getMetadata().setResourceVersion(page.getMetadata().getResourceVersion());
      }
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
      if (token == null || token.isEmpty()) {
        return all;
      }
    }
  }
}
