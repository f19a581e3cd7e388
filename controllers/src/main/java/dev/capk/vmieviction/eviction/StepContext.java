package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.extended.workqueue.ratelimiter.ItemExponentialFailureRateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.slf4j.event.Level;

/**
 * What the steps of one reconciler's evacuations share, and what this process remembers about the
 * evacuations under way (one record per VMI UID). Nothing remembered is needed for correctness
 * after a restart (the API holds the drain start and our cordon marks); it keeps the deadline from
 * moving later within a run, the backoff, the last obstacle for the deadline warning, and the
 * gauges.
 *
 * <p>The framework's {@code Result(true, delay)} requeues with {@code addAfter} and does not touch
 * the work queue's per-item failure counter, so the backoff is kept here, where it can be capped at
 * the deadline.
 */
final class StepContext {

  final InfraVmis vmis;
  final GuestClusters guests;
  final VmiEvents events;
  final EvictionMetrics metrics;
  final EvictionSettings settings;
  final Clock clock;
  private final Consumer<String> wake;

  /**
   * One VMI's evacuation. Its start is the earliest seen or written: the annotation can be
   * rewritten by anyone, this record cannot, so the deadline only moves earlier.
   */
  static final class Evacuation {
    final String uid;
    volatile Instant start;

    /** The earliest deadline of the evacuation under way (started); null when it is not. */
    volatile Instant deadline;

    volatile EvacuationPhase phase;

    /** The last obstacle, and the last failure of a step after it: for the deadline warning. */
    volatile String blocker;

    volatile String failure;

    /** When the guest node's drain began (its first drain step; a hold is not counted). */
    volatile Instant drainBegan;

    Evacuation(String uid, Instant start) {
      this.uid = uid;
      this.start = start;
    }

    /** Under way until {@code at}; the earliest is kept (Cluster API may move it earlier). */
    void underWay(Instant at) {
      if (deadline == null || at.isBefore(deadline)) {
        deadline = at;
      }
    }

    /** The last step's failure comes after the last obstacle: the pods left still count. */
    Optional<String> blocker() {
      return blocker == null
          ? Optional.ofNullable(failure)
          : Optional.of(failure == null ? blocker : blocker + "; then " + failure);
    }

    double used(Instant now) {
      long total = Duration.between(start, deadline).toMillis();
      long gone = Duration.between(start, now).toMillis();
      return total <= 0 ? 1 : Math.max(0, gone) / (double) total;
    }
  }

  private final ItemExponentialFailureRateLimiter<String> failures;

  /** Conflicts in a row per VMI key: bounded before its retries back off. */
  private final Map<String, Integer> conflicts = new ConcurrentHashMap<>();

  private final Map<String, Evacuation> evacuations = new ConcurrentHashMap<>();

  /**
   * VMIs (namespace/name) by what they wait for (a tenant Cluster's hold, a free live migration
   * slot, the KubeVirt CR's answer), woken when this process sees it end rather than up to {@code
   * --drain-retry-interval} later. A woken VMI's step decides again; what this process does not see
   * (a hold another replica recorded) is found by the VMI's own next look.
   */
  private final Map<String, Set<String>> waiting = new ConcurrentHashMap<>();

  /** The tenant Cluster of each VMI held or admitted: its end may free what holds the others. */
  private final Map<String, String> clusterOf = new ConcurrentHashMap<>();

  /**
   * What each lasting wait or failure of the steps was last told with, by a key of its own ({@code
   * uid/start/what}): a step looks again at every retry, and tells only a change. A wait unseen for
   * an hour is told afresh.
   */
  private final Cache<String, Object> told =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterAccess(Duration.ofHours(1)).build();

  /**
   * When this process first saw each VMI's evacuation mark, by UID, as the informer delivered it:
   * the drain start an evacuation records. A worker may reach the VMI much later (every worker
   * busy, or its key held by a slow uncordon check), and the deadline must still count from the
   * mark. After a restart, the first list shows the marks again.
   */
  private final Map<String, Instant> firstSeen = new ConcurrentHashMap<>();

  StepContext(
      InfraVmis vmis,
      GuestClusters guests,
      VmiEvents events,
      EvictionMetrics metrics,
      EvictionSettings settings,
      Clock clock,
      Consumer<String> wake) {
    this.vmis = vmis;
    this.guests = guests;
    this.events = events;
    this.metrics = metrics;
    this.settings = settings;
    this.clock = clock;
    this.wake = wake;
    this.failures =
        new ItemExponentialFailureRateLimiter<>(
            Duration.ofSeconds(1), settings.maxFailureBackoff());
    metrics.track(
        this,
        new EvictionMetrics.Source(
            () -> (int) underWay().count(),
            // Above one half, the deadline is nearer than the start.
            () -> underWay().mapToDouble(e -> e.used(clock.instant())).max().orElse(0),
            () ->
                evacuations.values().stream().map(e -> e.phase).filter(Objects::nonNull).toList()));
  }

  private Stream<Evacuation> underWay() {
    return evacuations.values().stream().filter(e -> e.deadline != null);
  }

  /** What the informer shows of a VMI now (added, updated or resynced). */
  void seen(VirtualMachineInstance vmi) {
    if (VmiEvictionReconciler.Eligibility.evacuationRequested(vmi)) {
      firstSeen.putIfAbsent(vmi.getMetadata().getUid(), clock.instant());
    } else {
      gone(vmi);
    }
  }

  /** The VMI is gone (or no longer selected). */
  void gone(VirtualMachineInstance vmi) {
    firstSeen.remove(vmi.getMetadata().getUid());
  }

  /** When the current mark of the VMI with this UID was first seen; empty if it was not. */
  Optional<Instant> firstSeen(String uid) {
    return uid == null ? Optional.empty() : Optional.ofNullable(firstSeen.get(uid));
  }

  /** The next delay after one more failure of this VMI's step. */
  Duration backoff(String key) {
    return failures.when(key);
  }

  /** One more conflict in a row on this VMI's guest node; @return how many in a row now */
  int conflicted(String key) {
    return conflicts.merge(key, 1, Integer::sum);
  }

  /** The step succeeded: the next failure starts the backoff afresh. */
  void succeeded(String key) {
    failures.forget(key);
    conflicts.remove(key);
  }

  /** The evacuation of VMI {@code uid}; a new VMI of the same name has its own. */
  Evacuation evacuation(String key, String uid) {
    return evacuations.compute(
        key, (k, e) -> e != null && e.uid.equals(uid) ? e : new Evacuation(uid, null));
  }

  /**
   * The evacuation of this VMI is over. With {@code keepStart} the earliest start is kept: a VMI
   * whose strategy flips away from External and back must not get a later deadline.
   */
  void ended(String key, boolean keepStart) {
    Evacuation e = evacuations.remove(key);
    if (keepStart && e != null) {
      evacuations.put(key, new Evacuation(e.uid, e.start));
    }
    guests.evacuationEnded(key);
    waitsNoMore(key);
  }

  /** {@code key} waits for {@code what}; false when it did already. */
  boolean waitFor(String what, String key) {
    return waiting.computeIfAbsent(what, w -> ConcurrentHashMap.newKeySet()).add(key);
  }

  /** {@code what} ended: wakes the VMIs that waited for it (returned), but {@code self}. */
  Set<String> waitOver(String what, String self) {
    Set<String> woken = waiting.remove(what);
    if (woken == null) {
      return Set.of();
    }
    woken.stream().filter(k -> !k.equals(self)).forEach(wake);
    return woken;
  }

  /** {@code key} waits for nothing any more (its evacuation is over, or it is gone). */
  void waitsNoMore(String key) {
    waiting.values().forEach(keys -> keys.remove(key));
  }

  /** The VMI {@code key} of tenant {@code cluster} is held ({@code !admitted}) or admitted. */
  void admission(String key, String cluster, boolean admitted) {
    clusterOf.put(key, cluster);
    Set<String> held = waiting.get(cluster);
    if (admitted && held != null) {
      held.remove(key);
    } else if (!admitted) {
      waitFor(cluster, key);
    }
  }

  /** {@code key} is gone, or no longer being evacuated: wake the VMIs held in its Cluster. */
  void admissionEnded(String key) {
    String cluster = clusterOf.remove(key);
    waitsNoMore(key);
    if (cluster != null) {
      waitOver(cluster, key);
    }
  }

  /**
   * Whether what {@code wait} waits for changed since it was last told (or never was); {@code
   * waitsFor} holds only what matters to a reader, never a time that moves at each retry.
   */
  boolean changed(String wait, Object waitsFor) {
    return !Objects.equals(told.asMap().put(wait, waitsFor), waitsFor);
  }

  /** A wait's log level: INFO when {@link #changed}, DEBUG when the same again. */
  Level level(String wait, Object waitsFor) {
    return changed(wait, waitsFor) ? Level.INFO : Level.DEBUG;
  }

  /** The wait is over: the next one under its key is told afresh. */
  void forget(String wait) {
    told.invalidate(wait);
  }
}
