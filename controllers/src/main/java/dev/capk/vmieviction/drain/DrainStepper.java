package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.drain.DrainStepper.EvictionOutcome.Kind;
import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.NodePodWatch;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1APIResourceList;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Eviction;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Preconditions;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import okhttp3.OkHttpClient;

/**
 * Drains a node one short step at a time, for callers that must not wait (a controller's worker). A
 * step gives each of the node's pods its verdict as {@code kubectl drain} does (refusing the whole
 * drain if any pod may not go), sends an eviction to each pod that is due (concurrently, bounded,
 * each with the pod's UID as a precondition), and returns at once: it never waits for a pod to
 * leave or for a budget to allow it. The caller comes back when a watch shows pods leaving or when
 * {@link DrainStep#nextTry()} is reached; {@link DrainMemory} carries each pod's retry schedule
 * from one step to the next.
 *
 * <p>The node's pods come from the caller (a watch's cache, see {@link NodePodWatch}, or a list),
 * so a step of a drain that waits costs no request at all. Cordoning is the caller's. Thread-safe
 * across drains; the steps of one drain must not overlap.
 */
public final class DrainStepper {

  /** Told, on the stepping thread, of each eviction before it goes and once its answer is kept. */
  interface Observer {
    Observer NONE = new Observer() {};

    default void sending(PodRef pod) {}

    default void answered(PodRef pod, EvictionOutcome outcome) {}
  }

  private final RawApi api;
  private final Executor evictions;
  private final Clock clock;

  /** Discovery's answer (or question) per client, by identity: asked once per client, not drain. */
  private final Map<ApiClient, CompletableFuture<Optional<String>>> evictionSupport;

  /** {@code evictions} runs one step's eviction requests side by side. */
  public DrainStepper(ApiClient client, Executor evictions, Clock clock) {
    this(client, evictions, clock, new ConcurrentHashMap<>());
  }

  DrainStepper(
      ApiClient client,
      Executor evictions,
      Clock clock,
      Map<ApiClient, CompletableFuture<Optional<String>>> evictionSupport) {
    this.api = new RawApi(Objects.requireNonNull(client, "client"));
    this.evictions = evictions;
    this.clock = clock;
    this.evictionSupport = evictionSupport;
  }

  /** One step, telling nobody of its evictions. */
  public DrainStep step(
      String nodeName,
      List<V1Pod> podsOnNode,
      DrainOptions options,
      DrainMemory memory,
      BudgetWatch budgets)
      throws ApiException, DrainRefusedException {
    Deadline bound = options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    return step(nodeName, podsOnNode, options, memory, budgets, Observer.NONE, bound);
  }

  /**
   * One step. For the Ready pods of each budget {@code budgets} knows, it sends no more evictions
   * than the budget allows now: the others wait, as if refused, for the budget to allow (the
   * caller's wake, {@link DrainMemory#budgetsAllow}) or for their retry timer. When a pod's timer
   * comes and its budget allows nothing, one such pod per budget is still sent (the eviction API
   * judges; the known status may be late). A server dry run sends each eviction with {@code
   * dryRun=All}: an accepted pod stays, so the caller, not this stepper, decides it is done. Every
   * request of the step ends by {@code bound} (the public steps': the options' timeout).
   *
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted by this step
   * @throws ApiException if eviction support could not be discovered
   */
  DrainStep step(
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
    RawApi api = this.api.until(bound);
    // The lookup outlives this step (its answers are kept for the drain): not bound to this step.
    PodFilters filters =
        new PodFilters(options, memory.daemonSets(() -> PodFilters.daemonSets(this.api)), clock);
    DrainPlan plan = DrainPlan.of(filters.inOrder(), podsOnNode);
    if (plan.refused()) {
      throw new DrainRefusedException(nodeName, plan.refusals());
    }
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
        // Sent within what the budget allows: no probe of it besides.
        probed.add(budget.get());
        due.add(pod);
      } else if (memory.timerDue(ref, now) && probed.add(budget.get())) {
        // Its timer came and the budget allows nothing as far as we know: one pod asks.
        due.add(pod);
      } else {
        held.put(ref, budget.get());
      }
    }
    memory.keepOnly(present);
    held.forEach((ref, budget) -> memory.held(ref, Set.of(budget), now));
    if (!due.isEmpty() && memory.evictionVersion == null) {
      // Discovered once per drain (per client, given the shared answers), not per pod or step.
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
          remember(options, memory, ref, byRef.get(ref), o, budgets, answered);
          observer.answered(ref, o);
        });
    return report(plan, memory, answers, now);
  }

  /**
   * The one known budget whose allowance limits the pod's eviction; none if no budget or several
   * are known to select it (the eviction API answers those), or if the pod is not Ready: the API
   * server may evict an unhealthy pod whatever the budget allows.
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
   * Whether and in which version the cluster serves evictions: asked once per client. Steps of the
   * same cluster that need the answer while one of them asks (the first steps of a burst of
   * evacuations) wait for that one answer, no longer than they would wait for their own request,
   * instead of each asking the same.
   */
  private Optional<String> evictionVersion(RawApi bounded, Deadline bound) throws ApiException {
    CompletableFuture<Optional<String>> mine = new CompletableFuture<>();
    CompletableFuture<Optional<String>> asked = evictionSupport.putIfAbsent(api.client(), mine);
    if (asked == null) {
      asked = mine;
      try {
        mine.complete(discoverEviction(bounded));
      } catch (ApiException | RuntimeException e) {
        // A failed discovery is not kept: the next step asks again.
        evictionSupport.remove(api.client(), mine);
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
    // Each request is bounded (Evictor's timeout, cut to the step's bound): this join ends.
    sent.forEach((ref, f) -> answers.put(ref, f.join()));
    return answers;
  }

  private static void remember(
      DrainOptions options,
      DrainMemory memory,
      PodRef ref,
      V1Pod pod,
      EvictionOutcome o,
      BudgetWatch budgets,
      Instant now) {
    switch (o.kind()) {
      case ACCEPTED -> memory.accepted(ref, now);
      case GONE, REPLACED -> memory.gone(ref);
      // A 429 names its budgets; one that does not: those the budget watch knows.
      case BLOCKED, NAMESPACE_TERMINATING ->
          memory.refused(
              ref,
              o.kind(),
              o.budgets().isEmpty() && o.kind() == Kind.BLOCKED
                  ? budgets.selecting(pod)
                  : o.budgets(),
              now);
      case THROTTLED -> memory.throttled(ref, o.retryAfterSeconds(), now);
      case TRANSIENT -> memory.transientFailure(ref, o.message(), now);
      case MULTIPLE_BUDGETS ->
          memory.failed(
              ref,
              "more than one PodDisruptionBudget selects pod "
                  + ref
                  + ", which the eviction API does not support: "
                  + o.message(),
              false,
              now);
      case FORBIDDEN ->
          memory.failed(
              ref,
              (memory.usingEviction(options) ? "create pods/eviction" : "delete pods")
                  + " denied: "
                  + o.message(),
              true,
              now);
      case FAILED -> memory.failed(ref, o.message(), false, now);
    }
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
        // Being deleted: its disappearance, not a timer, ends the wait.
        terminating.add(ref);
        waiting.put(ref, whyTerminating(pod));
        continue;
      }
      DrainMemory.PodState s = memory.state(ref);
      if (s == null) {
        // Not tried yet: more pods were due than one step sends.
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
   * Sends one eviction (policy group/version as discovered) or, when evictions are off, one
   * deletion, and classifies the answer. Both carry the pod's UID as a precondition, so a pod
   * recreated under the same name (StatefulSet) is never hit by a request meant for its
   * predecessor.
   *
   * <p>An eviction gets time to finish: the API server records the pod in its PodDisruptionBudget
   * before it deletes the pod, and a client that gives up in between (a guest client's short read
   * timeout on a busy API server) cancels the deletion but not the record, so the budget refuses
   * that pod for the two minutes until its controller drops the record. Evictions therefore wait up
   * to {@link #EVICTION_TIMEOUT}, never past the drain's deadline.
   */
  static final class Evictor {
    private final RawApi api;
    private final CoreV1Api core;
    private final DrainOptions options;
    static final Duration EVICTION_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MIN_EVICTION_TIMEOUT = Duration.ofSeconds(1);

    /** "policy/v1", or null to delete instead of evicting. */
    private final String evictionGroupVersion;

    /** The client's HTTP client (same connections), its read timeout long enough to evict. */
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

  /** What one eviction or deletion request achieved, classified from the HTTP answer. */
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

    /** The cause reason kube-apiserver gives a 403 for an eviction in a namespace being deleted. */
    static final String NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating";

    /** The cause reason kube-apiserver gives each budget that blocks an eviction. */
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

    /** A transport failure: no HTTP answer at all. */
    static EvictionOutcome unreachable(String message) {
      return new EvictionOutcome(Kind.TRANSIENT, message, Set.of(), 0);
    }

    /** Classifies an HTTP answer to an eviction or a deletion ({@code headers}: may be empty). */
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
          .filter(c -> DISRUPTION_BUDGET_CAUSE.equals(c.reason()))
          .map(c -> BUDGET_NAME.matcher(c.message()))
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

    /** The first value of an HTTP header, by its name in any case. */
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
  static Optional<String> discoverEviction(RawApi api) throws ApiException {
    return evictionGroupVersion(
        api.get(
            new CoreV1Api(api.client()).getAPIResources().buildCall(null),
            V1APIResourceList.class));
  }

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
}
