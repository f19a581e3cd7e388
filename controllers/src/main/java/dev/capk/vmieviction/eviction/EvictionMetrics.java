package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

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
    ERROR
  }

  /** How a live migration we started ended. */
  public enum MigrationResult {
    SUCCEEDED,
    FAILED,
    /** Deleted by us when falling back to the drain (deadline minus reserve, policy changed). */
    CANCELLED
  }

  private final PrometheusRegistry registry;
  private final Counter started;
  private final Counter evictions;
  private final Counter reconcileErrors;
  private final Counter throttledSteps;
  private final Counter migrations;
  private final Histogram duration;
  private final Histogram drainStepSeconds;
  private final Histogram reconcileSeconds;
  private final Histogram migrationSeconds;
  private final AtomicLong reconcileMaxNanos = new AtomicLong();

  /** What the in-progress gauges read of one source of evacuations, at scrape time. */
  record Source(
      IntSupplier inProgress,
      DoubleSupplier deadlineUsed,
      Supplier<Collection<EvacuationPhase>> phases) {}

  /** One per reconciler (several with external infra): the gauges sum or take the largest. */
  private final Map<Object, Source> sources = new ConcurrentHashMap<>();

  public EvictionMetrics(PrometheusRegistry registry) {
    this.registry = registry;
    // Counter names lose "_total" here and get it back in the exposition.
    started = counter("vmi_eviction_evacuations_started_total", "Evacuations started.");
    duration =
        histogram(
            "vmi_eviction_evacuation_duration_seconds",
            "From drain start to VMI deletion, by outcome (drained, deadline, node_missing).",
            new double[] {5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600},
            "outcome");
    evictions =
        counter("vmi_eviction_pod_evictions_total", "Guest pod evictions by result.", "result");
    reconcileErrors =
        counter(
            "vmi_eviction_reconcile_errors_total", "Reconciles that failed, by reason.", "reason");
    drainStepSeconds =
        histogram(
            "vmi_eviction_drain_step_duration_seconds",
            "Duration of one drain step of a guest node (the evictions that were due).",
            new double[] {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20});
    throttledSteps =
        counter(
            "vmi_eviction_guest_steps_throttled_total",
            "Drain steps put off because their guest cluster's request rate or steps at once were"
                + " used up.");
    // How long a worker is held: the figure that says whether a blocked tenant can starve others.
    reconcileSeconds =
        histogram(
            "vmi_eviction_reconcile_duration_seconds",
            "Duration of one VMI reconcile.",
            new double[] {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30});
    migrations =
        counter(
            "vmi_eviction_live_migrations_total",
            "Live migrations this controller started, by result (succeeded, failed, cancelled).",
            "result");
    migrationSeconds =
        histogram(
            "vmi_eviction_live_migration_duration_seconds",
            "From the creation of a successful live migration to the VMI leaving the node.",
            new double[] {1, 5, 15, 30, 60, 120, 300, 600, 1800});
    registerScrapeTimeGauges();
    // Every label value's series from the start: increase() over a series that appears with its
    // first count would miss that count (the alerts on forced deletions and errors read them).
    // Families with no series at all are not written either.
    Stream.of(Outcome.values()).forEach(o -> duration.initLabelValues(o.label));
    Stream.of(EvictionResult.values()).forEach(r -> evictions.initLabelValues(label(r)));
    Stream.of(MigrationResult.values()).forEach(r -> migrations.initLabelValues(label(r)));
    Stream.concat(
            Stream.of(GuestAccessException.Reason.values()).map(Enum::name),
            Stream.of(VmiEvents.RECONCILE_ERROR, VmiEvents.GUEST_NODE_CONFLICTS))
        .forEach(reconcileErrors::initLabelValues);
  }

  /**
   * Read at scrape time: the alert on evacuations nearing their deadline needs the share gone now,
   * not at the last reconcile.
   */
  private void registerScrapeTimeGauges() {
    gauge(
        "vmi_eviction_evacuations_in_progress",
        "VMIs being evacuated right now.",
        c -> c.call(sources.values().stream().mapToInt(s -> s.inProgress().getAsInt()).sum()));
    gauge(
        "vmi_eviction_evacuation_deadline_used_ratio",
        "Of the evacuations in progress, the largest share of the time from drain start to"
            + " deadline already gone (0 when none; 1 at the deadline).",
        c ->
            c.call(
                sources.values().stream()
                    .mapToDouble(s -> s.deadlineUsed().getAsDouble())
                    .max()
                    .orElse(0)));
    gauge(
        "vmi_eviction_evacuations_by_phase",
        "Evacuations in progress by the phase the controller recorded on their VMI (Held,"
            + " Paused, Migrating, Draining).",
        c -> {
          Map<EvacuationPhase, Long> n = new EnumMap<>(EvacuationPhase.class);
          sources.values().forEach(s -> s.phases().get().forEach(p -> n.merge(p, 1L, Long::sum)));
          for (String p : List.of("Held", "Paused", "Migrating", "Draining")) {
            c.call(n.getOrDefault(EvacuationPhase.valueOf(p), 0L), p);
          }
        },
        "phase");
    gauge(
        "vmi_eviction_reconcile_duration_max_seconds",
        "The longest VMI reconcile since the controller started.",
        c -> c.call(reconcileMaxNanos.get() / 1e9));
  }

  private static String label(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  private void gauge(
      String name, String help, Consumer<GaugeWithCallback.Callback> callback, String... labels) {
    GaugeWithCallback.builder()
        .name(name)
        .help(help)
        .labelNames(labels)
        .callback(callback)
        .register(registry);
  }

  private Counter counter(String name, String help, String... labelNames) {
    return Counter.builder().name(name).help(help).labelNames(labelNames).register(registry);
  }

  /** Classic buckets only: the text formats we serve carry no native histogram. */
  private Histogram histogram(String name, String help, double[] bounds, String... labelNames) {
    return Histogram.builder()
        .name(name)
        .help(help)
        .labelNames(labelNames)
        .classicOnly()
        .classicUpperBounds(bounds)
        .register(registry);
  }

  /** Where the in-progress gauges read {@code key}'s evacuations. */
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
    duration.labelValues(outcome.label).observe(Math.max(0, sinceStart.toMillis()) / 1000.0);
  }

  public void migrationEnded(MigrationResult result) {
    migrations.labelValues(label(result)).inc();
  }

  public void migrationSucceeded(Duration took) {
    migrations.labelValues(label(MigrationResult.SUCCEEDED)).inc();
    migrationSeconds.observe(Math.max(0, took.toMillis()) / 1000.0);
  }

  public void evictions(EvictionResult result, int count) {
    if (count > 0) {
      evictions.labelValues(label(result)).inc(count);
    }
  }

  public void reconcileError(String reason) {
    reconcileErrors.labelValues(reason).inc();
  }

  public void throttled() {
    throttledSteps.inc();
  }

  public void drainStep(Duration d) {
    drainStepSeconds.observe(d.toNanos() / 1e9);
  }

  public void reconciled(Duration d) {
    reconcileSeconds.observe(d.toNanos() / 1e9);
    reconcileMaxNanos.accumulateAndGet(d.toNanos(), Math::max);
  }
}
