package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.drain.DrainProgressListener;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SkippedPod;
import io.kubernetes.client.openapi.ApiException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a maintenance's progress to its status while a drain pass runs: after each pod that goes
 * (or is blocked), coalesced so a node with hundreds of pods costs a few writes a second, never one
 * per pod in a burst. Writes run on the status thread, never on the drain's threads. After {@link
 * #close()} returns nothing more is written, so the pass's final status cannot be overwritten by a
 * late progress write.
 */
final class ProgressWriter implements DrainProgressListener, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProgressWriter.class);

  private final String name;
  private final DrainProgress progress;
  private final MaintenanceCluster cluster;
  private final ScheduledExecutorService executor;
  private final Duration interval;
  private final Clock clock;

  /** Guards the flags; held only briefly, so the drain's callbacks never wait for a write. */
  private final Object lock = new Object();

  /** Held while a write is in flight, so close() can wait for it. */
  private final Object writing = new Object();

  private boolean scheduled;
  private boolean closed;

  ProgressWriter(
      String name,
      DrainProgress progress,
      MaintenanceCluster cluster,
      ScheduledExecutorService executor,
      Duration interval,
      Clock clock) {
    this.name = name;
    this.progress = progress;
    this.cluster = cluster;
    this.executor = executor;
    this.interval = interval;
    this.clock = clock;
  }

  @Override
  public void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {
    progress.planned(toEvict, skipped);
    schedule();
  }

  @Override
  public void evicted(PodRef pod) {
    progress.gone(pod);
    schedule();
  }

  @Override
  public void deleted(PodRef pod) {
    progress.gone(pod);
    schedule();
  }

  @Override
  public void notWaitedFor(PodRef pod, String reason) {
    progress.gone(pod);
    schedule();
  }

  @Override
  public void blocked(PodRef pod, Set<String> budgets, String message) {
    progress.blocked(pod, budgets);
    schedule();
  }

  @Override
  public void failed(PodRef pod, String reason) {
    progress.failed(pod, reason);
    schedule();
  }

  private void schedule() {
    synchronized (lock) {
      if (closed || scheduled) {
        return;
      }
      scheduled = true;
    }
    executor.schedule(this::write, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void write() {
    synchronized (writing) {
      synchronized (lock) {
        scheduled = false;
        if (closed) {
          return;
        }
      }
      DrainProgress.Snapshot s = progress.snapshot();
      StatusPatch patch =
          StatusPatch.of()
              .phase(NodeMaintenanceApi.PHASE_RUNNING)
              .progress(s)
              .lastUpdate(clock.instant());
      if (s.lastError() != null) {
        // Only set, never cleared here: the pass's outcome decides whether the error is over.
        patch.lastError(s.lastError());
      }
      try {
        cluster.patchStatus(name, patch.toJson());
      } catch (ApiException e) {
        log.debug(
            "progress not written nodeMaintenance={} code={} error={}",
            name,
            e.getCode(),
            e.getMessage());
      }
    }
  }

  /** No more writes; waits for one in flight. */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
    }
    synchronized (writing) {
      // nothing: waits for a write in flight
    }
  }
}
