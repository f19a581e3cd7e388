package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.kube.ScrapeGauge;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/** The controller's Prometheus metrics. One instance per registry. */
public final class EvictionMetrics {

  /** How an evacuation ended. */
  public enum Outcome {
    DRAINED,
    DEADLINE,
    NODE_MISSING,
    /** The Machine is excluded from draining (Cluster API's exclude-node-draining annotation). */
    DRAIN_EXCLUDED;

    final String label = name().toLowerCase(Locale.ROOT);
  }

  /** What one pod eviction came to, as reported by a drain pass. */
  public enum EvictionResult {
    EVICTED,
    BLOCKED_BY_BUDGET,
    ERROR;

    final String label = name().toLowerCase(Locale.ROOT);
  }

  /** How a live migration we started ended. */
  public enum MigrationResult {
    SUCCEEDED,
    FAILED,
    /** Deleted by us when falling back to the drain (deadline minus reserve, policy changed). */
    CANCELLED;

    final String label = name().toLowerCase(Locale.ROOT);
  }

  private final Counter migrations;
  private final Histogram migrationSeconds;
  private final Counter started;
  private final Histogram duration;
  private final Counter evictions;
  private final Counter reconcileErrors;
  private final Histogram drainStepSeconds;
  private final Counter throttledSteps;
  private final Histogram reconcileSeconds;
  private final Gauge reconcileMaxSeconds;
  private final AtomicLong reconcileMaxNanos = new AtomicLong();

  /**
   * What the gauges of the evacuations in progress read of one source of evacuations, at scrape
   * time: how many, the largest share of drain start to deadline gone, and each one's phase.
   */
  record Source(
      IntSupplier inProgress,
      DoubleSupplier deadlineUsed,
      Supplier<Collection<EvacuationPhase>> phases) {}

  /**
   * Per source of evacuations (one per reconciler: several with external infra, one pipeline per
   * infra namespace): the gauges sum their counts and take the largest deadline used.
   */
  private final Map<Object, Source> sources = new ConcurrentHashMap<>();

  public EvictionMetrics(CollectorRegistry registry) {
    ScrapeGauge.register(
        registry,
        "vmi_eviction_evacuations_in_progress",
        "VMIs being evacuated right now.",
        () -> sources.values().stream().mapToInt(s -> s.inProgress().getAsInt()).sum());
    started =
        Counter.build("vmi_eviction_evacuations_started_total", "Evacuations started.")
            .register(registry);
    duration =
        Histogram.build(
                "vmi_eviction_evacuation_duration_seconds",
                "From drain start to VMI deletion, by outcome (drained, deadline, node_missing).")
            .labelNames("outcome")
            .buckets(5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600)
            .register(registry);
    // Every outcome's series from the start: increase() over a series that appears with its first
    // deadline deletion would miss that deletion (the alert on forced deletions reads it).
    for (Outcome outcome : Outcome.values()) {
      duration.labels(outcome.label);
    }
    evictions =
        Counter.build("vmi_eviction_pod_evictions_total", "Guest pod evictions by result.")
            .labelNames("result")
            .register(registry);
    reconcileErrors =
        Counter.build("vmi_eviction_reconcile_errors_total", "Reconciles that failed, by reason.")
            .labelNames("reason")
            .register(registry);
    drainStepSeconds =
        Histogram.build(
                "vmi_eviction_drain_step_duration_seconds",
                "Duration of one drain step of a guest node (the evictions that were due).")
            .buckets(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20)
            .register(registry);
    throttledSteps =
        Counter.build(
                "vmi_eviction_guest_steps_throttled_total",
                "Drain steps put off because their guest cluster's request rate or steps at once"
                    + " were used up.")
            .register(registry);
    // How long a worker is held: the figure that says whether a blocked tenant can starve others.
    reconcileSeconds =
        Histogram.build("vmi_eviction_reconcile_duration_seconds", "Duration of one VMI reconcile.")
            .buckets(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30)
            .register(registry);
    migrations =
        Counter.build(
                "vmi_eviction_live_migrations_total",
                "Live migrations this controller started, by result (succeeded, failed, cancelled).")
            .labelNames("result")
            .register(registry);
    migrationSeconds =
        Histogram.build(
                "vmi_eviction_live_migration_duration_seconds",
                "From the creation of a successful live migration to the VMI leaving the node.")
            .buckets(1, 5, 15, 30, 60, 120, 300, 600, 1800)
            .register(registry);
    reconcileMaxSeconds =
        Gauge.build(
                "vmi_eviction_reconcile_duration_max_seconds",
                "The longest VMI reconcile since the controller started.")
            .register(registry);
    registerDeadlineUsedGauge(registry);
    registerPhaseGauge(registry);
  }

  /**
   * Read at scrape time: the alert on evacuations nearing their deadline needs the share gone now,
   * not at the last reconcile.
   */
  private void registerDeadlineUsedGauge(CollectorRegistry registry) {
    ScrapeGauge.register(
        registry,
        "vmi_eviction_evacuation_deadline_used_ratio",
        "Of the evacuations in progress, the largest share of the time from drain start to"
            + " deadline already gone (0 when none; 1 at the deadline).",
        () ->
            sources.values().stream()
                .mapToDouble(s -> s.deadlineUsed().getAsDouble())
                .max()
                .orElse(0));
  }

  /** The evacuations in each phase the controller records, summed over sources at scrape time. */
  private void registerPhaseGauge(CollectorRegistry registry) {
    Gauge byPhase =
        Gauge.build(
                "vmi_eviction_evacuations_by_phase",
                "Evacuations in progress by the phase the controller recorded on their VMI (Held,"
                    + " Paused, Migrating, Draining).")
            .labelNames("phase")
            .register(registry);
    for (EvacuationPhase phase :
        List.of(
            EvacuationPhase.Held,
            EvacuationPhase.Paused,
            EvacuationPhase.Migrating,
            EvacuationPhase.Draining)) {
      byPhase.setChild(
          new Gauge.Child() {
            @Override
            public double get() {
              return sources.values().stream()
                  .flatMap(s -> s.phases().get().stream())
                  .filter(phase::equals)
                  .count();
            }
          },
          phase.name());
    }
  }

  /** Where the gauges of the evacuations in progress read {@code key}'s. */
  void track(Object key, Source source) {
    sources.put(key, source);
  }

  /** {@code key}'s evacuations no longer count (its pipeline stopped). */
  void forget(Object key) {
    sources.remove(key);
  }

  public void evacuationStarted() {
    started.inc();
  }

  public void evacuationEnded(Outcome outcome, Duration sinceStart) {
    duration.labels(outcome.label).observe(Math.max(0, sinceStart.toMillis()) / 1000.0);
  }

  public void migrationEnded(MigrationResult result) {
    migrations.labels(result.label).inc();
  }

  public void migrationSucceeded(Duration took) {
    migrations.labels(MigrationResult.SUCCEEDED.label).inc();
    migrationSeconds.observe(Math.max(0, took.toMillis()) / 1000.0);
  }

  public void evictions(EvictionResult result, int count) {
    if (count > 0) {
      evictions.labels(result.label).inc(count);
    }
  }

  public void reconcileError(String reason) {
    reconcileErrors.labels(reason).inc();
  }

  public void throttled() {
    throttledSteps.inc();
  }

  public void drainStep(Duration d) {
    drainStepSeconds.observe(d.toNanos() / 1e9);
  }

  public void reconciled(Duration d) {
    long nanos = d.toNanos();
    reconcileSeconds.observe(nanos / 1e9);
    if (reconcileMaxNanos.accumulateAndGet(nanos, Math::max) == nanos) {
      reconcileMaxSeconds.set(nanos / 1e9);
    }
  }
}
