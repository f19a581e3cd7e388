package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudgetList;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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

  /**
   * Told of each eviction a step sends, on the stepping thread: before it goes, and once its answer
   * is in the drain's memory. For a caller that reports every request as kubectl prints it.
   */
  interface Observer {
    Observer NONE = new Observer() {};

    default void sending(PodRef pod) {}

    default void answered(PodRef pod, EvictionOutcome outcome) {}
  }

  private final RawApi api;
  private final Executor evictions;
  private final Clock clock;

  /** Eviction support per client, shared by the steppers of many drains; null: per drain. */
  private final Map<ApiClient, CompletableFuture<Optional<String>>> evictionSupport;

  /**
   * @param evictions runs one step's eviction requests side by side
   */
  public DrainStepper(ApiClient client, Executor evictions, Clock clock) {
    this(client, evictions, clock, null);
  }

  /**
   * @param evictionSupport what discovery answered (or is being asked) per client, by identity,
   *     filled by this stepper: a cluster's eviction support is asked once per client, not once per
   *     drain
   */
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

  /**
   * One step.
   *
   * @param podsOnNode the pods bound to the node now
   * @param options kubectl's drain flags; {@code timeout} bounds each eviction request of the step
   * @throws DrainRefusedException if some pod may not be deleted with these options; nothing was
   *     evicted by this step
   * @throws ApiException if eviction support could not be discovered
   */
  public DrainStep step(
      String nodeName, List<V1Pod> podsOnNode, DrainOptions options, DrainMemory memory)
      throws ApiException, DrainRefusedException {
    return step(nodeName, podsOnNode, options, memory, BudgetAllowance.UNKNOWN, Observer.NONE);
  }

  /**
   * One step that sends, for the Ready pods of each budget {@code budgets} knows, no more evictions
   * than the budget allows now: the others wait, as if refused, for the budget to allow (the
   * caller's wake, {@link DrainMemory#budgetsAllow}) or for their retry timer. When a pod's timer
   * comes and its budget allows nothing, one such pod per budget is still sent (the eviction API
   * judges; the known status may be late).
   */
  public DrainStep step(
      String nodeName,
      List<V1Pod> podsOnNode,
      DrainOptions options,
      DrainMemory memory,
      BudgetAllowance budgets)
      throws ApiException, DrainRefusedException {
    return step(nodeName, podsOnNode, options, memory, budgets, Observer.NONE);
  }

  /**
   * As {@link #step(String, List, DrainOptions, DrainMemory, BudgetAllowance)}, telling {@code
   * observer} of each eviction. A server dry run sends each eviction with {@code dryRun=All}: an
   * accepted pod stays, so the caller, not this stepper, decides it is done.
   */
  DrainStep step(
      String nodeName,
      List<V1Pod> podsOnNode,
      DrainOptions options,
      DrainMemory memory,
      BudgetAllowance budgets,
      Observer observer)
      throws ApiException, DrainRefusedException {
    if (options.dryRun() == DryRun.CLIENT) {
      throw new IllegalArgumentException("a client dry run sends nothing: there is no step");
    }
    Deadline bound = options.timeout().isZero() ? Deadline.NONE : Deadline.after(options.timeout());
    RawApi api = this.api.until(bound);
    // The lookup outlives this step (its answers are kept for the drain): not bound to this step.
    PodFilters filters =
        new PodFilters(options, memory.daemonSets(() -> new ApiDaemonSetLookup(this.api)), clock);
    DrainPlan plan = DrainPlan.of(filters.inOrder(), podsOnNode);
    if (plan.refused()) {
      throw new DrainRefusedException(nodeName, plan.refusals(), false);
    }
    Instant now = clock.instant();
    Set<PodRef> present = new HashSet<>();
    List<V1Pod> due = new ArrayList<>();
    Map<PodRef, String> held = new LinkedHashMap<>();
    Set<String> probed = new HashSet<>();
    for (V1Pod pod : plan.toEvict()) {
      PodRef ref = PodRef.of(pod);
      present.add(ref);
      boolean terminating =
          pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null;
      if (terminating || !memory.due(ref, now) || due.size() >= options.maxConcurrentEvictions()) {
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
    if (!due.isEmpty() && !memory.evictionDiscovered()) {
      // Discovered once per drain (per client, given the shared answers), not per pod or step.
      memory.evictionVersion(
          options.disableEviction() ? Optional.empty() : evictionVersion(api, bound));
    }
    Map<PodRef, EvictionOutcome> answers = evict(api, options, memory, due, bound, observer);
    Map<PodRef, V1Pod> byRef = new HashMap<>();
    due.forEach(p -> byRef.put(PodRef.of(p), p));
    answers.forEach(
        (ref, o) -> {
          remember(api, memory, ref, byRef.get(ref), o, budgets, now);
          observer.answered(ref, o);
        });
    return report(plan, memory, answers, now);
  }

  /**
   * The one known budget whose allowance limits the pod's eviction; none if no budget or several
   * are known to select it (the eviction API answers those), or if the pod is not Ready: the API
   * server may evict an unhealthy pod whatever the budget allows.
   */
  private static Optional<String> limitingBudget(V1Pod pod, BudgetAllowance budgets) {
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
    if (evictionSupport == null) {
      return new EvictionSupport(bounded).discover();
    }
    CompletableFuture<Optional<String>> mine = new CompletableFuture<>();
    CompletableFuture<Optional<String>> asked = evictionSupport.putIfAbsent(api.client(), mine);
    if (asked == null) {
      try {
        Optional<String> found = new EvictionSupport(bounded).discover();
        mine.complete(found);
        return found;
      } catch (ApiException | RuntimeException e) {
        // A failed discovery is not kept: the next step asks again.
        evictionSupport.remove(api.client(), mine);
        mine.completeExceptionally(e);
        throw e;
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
    Evictor evictor = new Evictor(api, options, memory.evictionVersion().orElse(null));
    Map<PodRef, CompletableFuture<EvictionOutcome>> sent = new LinkedHashMap<>();
    for (V1Pod pod : due) {
      PodRef ref = PodRef.of(pod);
      observer.sending(ref);
      sent.put(
          ref, CompletableFuture.supplyAsync(() -> evictor.evictOrDelete(ref, bound), evictions));
    }
    Map<PodRef, EvictionOutcome> answers = new LinkedHashMap<>();
    // Each request is bounded (Evictor's timeout, cut to the step's bound): this join ends.
    sent.forEach(
        (ref, f) -> {
          EvictionOutcome o;
          try {
            o = f.join();
          } catch (RuntimeException e) {
            o = EvictionOutcome.unreachable("unexpected error: " + e);
          }
          answers.put(ref, o);
        });
    return answers;
  }

  private static void remember(
      RawApi api,
      DrainMemory memory,
      PodRef ref,
      V1Pod pod,
      EvictionOutcome o,
      BudgetAllowance budgets,
      Instant now) {
    switch (o.kind()) {
      case ACCEPTED -> memory.accepted(ref, now);
      case GONE, REPLACED -> memory.gone(ref);
      case BLOCKED ->
          memory.refused(
              ref,
              DrainMemory.Waiting.BLOCKED,
              o.budgets().isEmpty() ? selecting(api, pod, budgets) : o.budgets(),
              now);
      case THROTTLED -> memory.throttled(ref, o.retryAfterSeconds(), now);
      case NAMESPACE_TERMINATING ->
          memory.refused(ref, DrainMemory.Waiting.NAMESPACE_TERMINATING, Set.of(), now);
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
              (memory.evictionVersion().isPresent() ? "create pods/eviction" : "delete pods")
                  + " denied: "
                  + o.message(),
              true,
              now);
      case FAILED -> memory.failed(ref, o.message(), false, now);
    }
  }

  /**
   * The budgets selecting a pod refused by a 429 that named none: from the budget watch's cache if
   * it knows any, else those of the pod's namespace, listed.
   */
  private static Set<String> selecting(RawApi api, V1Pod pod, BudgetAllowance budgets) {
    Set<String> known = budgets.selecting(pod);
    if (!known.isEmpty()) {
      return known;
    }
    Set<String> names = new TreeSet<>();
    try {
      V1PodDisruptionBudgetList list =
          api.get(
              new PolicyV1Api(api.client())
                  .listNamespacedPodDisruptionBudget(pod.getMetadata().getNamespace())
                  .buildCall(null),
              V1PodDisruptionBudgetList.class);
      if (list.getItems() != null) {
        list.getItems().stream()
            .filter(b -> BudgetWatch.selects(b, pod))
            .forEach(b -> names.add(b.getMetadata().getName()));
      }
    } catch (ApiException e) {
      // Best effort: the names only enrich the report; the retry goes on without them.
    }
    return names;
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
      if (pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null) {
        // Being deleted: its disappearance, not a timer, ends the wait.
        terminating.add(ref);
        waiting.put(ref, PodWaits.terminating(pod));
        continue;
      }
      DrainMemory.PodState s = memory.state(ref);
      if (s == null) {
        // Not tried yet: more pods were due than one step sends.
        next = earliest(next, now);
        waiting.put(ref, PodWaits.NOT_SENT);
        continue;
      }
      next = earliest(next, s.due);
      waiting.put(ref, PodWaits.of(ref, s));
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
}
