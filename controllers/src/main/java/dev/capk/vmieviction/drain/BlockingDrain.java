package dev.capk.vmieviction.drain;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The waiting half of a blocking drain, once the node is cordoned and its pods planned: steps the
 * drain ({@link DrainStepper}, the engine the controller uses) and, between steps, waits for the
 * node's pod watch to show pods leaving or for the next eviction to be due, never past the drain's
 * deadline. The watch starts from the plan's list, so no deletion slips past it.
 */
final class BlockingDrain {
  /** The longest wait between two looks: skip-wait ages grow without any event to say so. */
  private static final Duration TICK = Duration.ofSeconds(1);

  private final RawApi api;
  private final String node;
  private final DrainOptions options;
  private final Deadline deadline;
  private final Clock clock;
  private final Semaphore wake = new Semaphore(0);

  /**
   * @param api bound to the drain's deadline
   */
  BlockingDrain(RawApi api, String node, DrainOptions options, Deadline deadline, Clock clock) {
    this.api = api;
    this.node = node;
    this.options = options;
    this.deadline = deadline;
    this.clock = clock;
  }

  /** How the loop ended. */
  record End(BlockingDrainPods pods, boolean timedOut, Optional<String> interruption) {}

  /**
   * Evicts the plan's pods from the listed node and waits until they are gone, the deadline passes,
   * or the watch is lost.
   *
   * @throws ApiException if eviction support could not be discovered
   */
  End run(List<V1Pod> toEvict, PodLister.Listing listing) throws ApiException {
    // Evictions of one step side by side, no more than the options allow.
    ExecutorService evictions =
        Executors.newFixedThreadPool(
            Math.max(1, Math.min(options.maxConcurrentEvictions(), toEvict.size())),
            new ThreadFactoryBuilder()
                .setNameFormat("drain-" + node.replace("%", "%%") + "-evict-%d")
                .setDaemon(true)
                .build());
    // kubectl retries a refused eviction at one fixed interval: no backoff beyond it.
    DrainMemory memory =
        new DrainMemory(options.evictionRetryInterval(), options.evictionRetryInterval());
    BlockingDrainPods pods = new BlockingDrainPods(toEvict, memory, options, clock);
    DrainStepper stepper = new DrainStepper(api.client(), evictions, clock);
    try (NodePodWatch watch = NodePodWatch.start(api, node, wake::release, seed(listing))) {
      while (true) {
        watch.pods().ifPresent(pods::seen);
        if (pods.complete()) {
          return new End(pods, false, Optional.empty());
        }
        if (watch.failure().isPresent()) {
          return new End(pods, false, watch.failure());
        }
        if (deadline.passed()) {
          return new End(pods, true, Optional.empty());
        }
        await(step(stepper, memory, pods));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new End(pods, false, Optional.of("interrupted"));
    } finally {
      evictions.shutdownNow();
    }
  }

  /** One step over the pods that still need an eviction; when the next one is due. */
  private Optional<Instant> step(DrainStepper stepper, DrainMemory memory, BlockingDrainPods pods)
      throws ApiException {
    List<V1Pod> sendable = pods.sendable();
    if (sendable.isEmpty()) {
      // Only deletions are awaited: the watch says when.
      return Optional.empty();
    }
    // Each step's requests end by the drain's deadline, not a full timeout after the step began.
    Duration left = deadline.none() ? Duration.ZERO : deadline.remaining();
    DrainOptions bounded =
        options.toBuilder().timeout(left.isZero() ? left : max(left, Duration.ofMillis(1))).build();
    try {
      return stepper.step(node, sendable, bounded, memory, BudgetAllowance.UNKNOWN, pods).nextTry();
    } catch (DrainRefusedException e) {
      // Pods that changed since the plan (the plan refuses none of them before any eviction).
      pods.refused(e);
      return Optional.empty();
    }
  }

  /** Waits for pods to leave, for {@code next}, or a tick, whichever comes first. */
  private void await(Optional<Instant> next) throws InterruptedException {
    Duration wait = TICK;
    if (next.isPresent()) {
      wait = min(wait, Duration.between(clock.instant(), next.get()));
    }
    wait = deadline.cap(wait);
    if (!wait.isNegative() && !wait.isZero()) {
      wake.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
    }
    // Several wake-ups while stepping ask for one look, not one each.
    wake.drainPermits();
  }

  /** The plan's list, for the watch to resume from. */
  private static V1PodList seed(PodLister.Listing listing) {
    return new V1PodList()
        .metadata(new V1ListMeta().resourceVersion(listing.resourceVersion()))
        .items(listing.pods());
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }
}
