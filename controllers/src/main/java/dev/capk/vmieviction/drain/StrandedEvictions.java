package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import dev.capk.vmieviction.drain.SteppedDrains.EvictionOutcome;
import dev.capk.vmieviction.drain.SteppedDrains.Evictor;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evictions the API server approved but did not carry out. The eviction subresource records the pod
 * in its budget's {@code status.disruptedPods} before it deletes the pod; when the deletion does
 * not follow (the client went away in between), the budget counts the pod as disrupted for two
 * minutes while it runs on, and refuses evictions it would otherwise allow. kubectl waits those
 * minutes out. A step refused by such a budget deletes its own pods that the budget records that
 * way: the budget already counts them gone.
 *
 * <p>Only records that still count when the deletion lands ({@link #FRESH}, by the API server's
 * {@code Date}, so a skewed local clock cannot make an expired record look young), and only for a
 * pod created before its record (a StatefulSet's successor was never approved).
 */
final class StrandedEvictions {
  private static final Logger LOG = LoggerFactory.getLogger(StrandedEvictions.class);

  /** Half the budget controller's two minutes: the rest covers the deletion request. */
  static final Duration FRESH = Duration.ofSeconds(60);

  /** A younger record may be an eviction under way, its deletion not yet seen by the watch. */
  static final Duration IN_FLIGHT = Duration.ofSeconds(5);

  private StrandedEvictions() {}

  /**
   * Reads each budget that refused a pod of {@code answers} once and deletes the pods it records as
   * evicted but not deleted; their answers become the deletions'. Best effort.
   */
  static Map<PodRef, EvictionOutcome> complete(
      RawApi api,
      DrainOptions options,
      List<V1Pod> podsToEvict,
      Map<PodRef, EvictionOutcome> answers,
      BudgetWatch known,
      Instant localNow,
      Deadline bound) {
    Set<String> refusing = new TreeSet<>();
    answers.forEach(
        (ref, o) -> {
          if (o.kind() == EvictionOutcome.Kind.BLOCKED) {
            o.budgets().forEach(b -> refusing.add(ref.namespace() + "/" + b));
          }
        });
    if (refusing.isEmpty()) {
      return answers;
    }
    Map<PodRef, EvictionOutcome> completed = new LinkedHashMap<>(answers);
    Evictor deleter = null;
    for (String budget : refusing) {
      // Read only where the watch's copy records one of these pods: a refusal costs no request.
      Optional<V1PodDisruptionBudget> seen = known.lastSeen(budget);
      if (seen.isEmpty() || find(seen.get(), podsToEvict, localNow, null).isEmpty()) {
        continue;
      }
      for (V1Pod pod : stranded(api, budget, podsToEvict)) {
        PodRef ref = PodRef.of(pod);
        if (deleter == null) {
          deleter = new Evictor(api, options, null);
        }
        EvictionOutcome deleted = deleter.evictOrDelete(ref, bound);
        LOG.info(
            "deleted pod whose eviction its budget approved but the API server did not carry out"
                + " pod={} budget={} outcome={}",
            ref,
            budget,
            deleted.kind());
        if (deleted.kind() != EvictionOutcome.Kind.ACCEPTED
            && deleted.kind() != EvictionOutcome.Kind.GONE
            && deleted.kind() != EvictionOutcome.Kind.REPLACED) {
          // Not ours to delete (403) or not now: the refusal stands, the record expires.
          continue;
        }
        completed.put(ref, deleted);
      }
    }
    return completed;
  }

  private static List<V1Pod> stranded(RawApi api, String budget, List<V1Pod> podsToEvict) {
    String namespace = budget.substring(0, budget.indexOf('/'));
    String name = budget.substring(budget.indexOf('/') + 1);
    try {
      RawApi.Answer answer =
          api.execute(
              new PolicyV1Api(api.client())
                  .readNamespacedPodDisruptionBudget(name, namespace)
                  .buildCall(null));
      if (!answer.ok()) {
        return List.of();
      }
      Optional<Instant> serverNow = serverTime(answer.headers());
      if (serverNow.isEmpty()) {
        return List.of();
      }
      return find(
          LenientJson.parse(answer.body(), V1PodDisruptionBudget.class),
          podsToEvict,
          serverNow.get(),
          FRESH);
    } catch (ApiException | RuntimeException e) {
      LOG.debug("budget not read, its refusals stand budget={} reason={}", budget, e.toString());
      return List.of();
    }
  }

  /**
   * The pods {@code budget} records as evicted at least {@link #IN_FLIGHT} and less than {@code
   * maxAge} (if not null) before {@code now}, not being deleted, and created before their record.
   */
  static List<V1Pod> find(
      V1PodDisruptionBudget budget, Collection<V1Pod> pods, Instant now, Duration maxAge) {
    if (budget.getStatus() == null || budget.getStatus().getDisruptedPods() == null) {
      return List.of();
    }
    Map<String, OffsetDateTime> records = budget.getStatus().getDisruptedPods();
    String namespace = budget.getMetadata() == null ? null : budget.getMetadata().getNamespace();
    List<V1Pod> found = new ArrayList<>();
    for (V1Pod pod : pods) {
      V1ObjectMeta m = pod.getMetadata();
      if (m == null || m.getName() == null || m.getNamespace() == null) {
        continue;
      }
      OffsetDateTime recorded = records.get(m.getName());
      if (recorded == null
          || !m.getNamespace().equals(namespace)
          || m.getDeletionTimestamp() != null
          || m.getCreationTimestamp() == null
          || !m.getCreationTimestamp().toInstant().isBefore(recorded.toInstant())
          || recorded.toInstant().plus(IN_FLIGHT).isAfter(now)
          || maxAge != null && !recorded.toInstant().plus(maxAge).isAfter(now)) {
        continue;
      }
      found.add(pod);
    }
    return found;
  }

  static Optional<Instant> serverTime(Map<String, List<String>> headers) {
    try {
      return EvictionOutcome.header(headers, "Date")
          .map(d -> ZonedDateTime.parse(d, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }
}
