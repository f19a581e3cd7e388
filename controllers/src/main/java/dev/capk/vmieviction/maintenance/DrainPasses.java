package dev.capk.vmieviction.maintenance;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainResult;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs drain passes on threads of their own, so one can be stopped at once when its maintenance is
 * deleted: the reconcile worker waits for the pass, the informer's handler cancels it. A cancelled
 * pass is waited for (briefly) until its evictions stopped, so restoring the node never races with
 * an eviction still in flight.
 */
public final class DrainPasses implements AutoCloseable {

  /** The pass was cancelled because its maintenance is being deleted. */
  public static final class Cancelled extends Exception {
    private static final long serialVersionUID = 1L;

    Cancelled() {
      super("drain attempt cancelled: the NodeMaintenance is being deleted");
    }
  }

  /** How long a cancelled pass may take to wind down. */
  static final Duration WIND_DOWN = Duration.ofSeconds(15);

  private record Running(Future<DrainResult> future, CountDownLatch finished) {}

  private final NodeDrain drain;
  private final ExecutorService pool;
  private final Map<String, Running> running = new ConcurrentHashMap<>();

  public DrainPasses(NodeDrain drain) {
    this.drain = drain;
    this.pool =
        Executors.newCachedThreadPool(
            new ThreadFactoryBuilder()
                .setNameFormat("node-maintenance-drain-%d")
                .setDaemon(true)
                .build());
  }

  /**
   * Drains the node for the maintenance {@code key} (its UID), blocking until the pass ends.
   *
   * @throws Cancelled if {@link #cancel} was called for this key meanwhile
   */
  public DrainResult run(String key, String node, DrainOptions options)
      throws ApiException, DrainRefusedException, Cancelled, InterruptedException {
    CountDownLatch finished = new CountDownLatch(1);
    Future<DrainResult> future =
        pool.submit(
            () -> {
              try {
                return drain.drain(node, options);
              } finally {
                finished.countDown();
              }
            });
    running.put(key, new Running(future, finished));
    try {
      return future.get();
    } catch (CancellationException e) {
      finished.await(WIND_DOWN.toMillis(), TimeUnit.MILLISECONDS);
      throw new Cancelled();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof ApiException a) {
        throw a;
      }
      if (cause instanceof DrainRefusedException r) {
        throw r;
      }
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    } catch (InterruptedException e) {
      future.cancel(true);
      throw e;
    } finally {
      running.remove(key);
    }
  }

  /** Stops the pass of this maintenance, if one runs. */
  public void cancel(String key) {
    Running r = running.get(key);
    if (r != null) {
      r.future().cancel(true);
    }
  }

  public boolean isRunning(String key) {
    return running.containsKey(key);
  }

  @Override
  public void close() {
    running.values().forEach(r -> r.future().cancel(true));
    pool.shutdownNow();
  }
}
