package dev.capk.vmieviction.runtime;

import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.extended.controller.ControllerManager;
import io.kubernetes.client.extended.controller.DefaultController;
import io.kubernetes.client.extended.controller.LeaderElectingController;
import io.kubernetes.client.extended.leaderelection.LeaderElector;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs every controller of the process as controller-runtime's manager does: all workers in one
 * {@link ControllerManager}, under one {@link LeaderElectingController} when leader election is on.
 * What the client lacks: informers started outside the lease (a standby's caches are warm); a
 * shutdown that waits (bounded) for reconciles in flight, so no drain pass runs after a successor
 * took over; and a lost lease that stops the process ({@link #awaitTermination()}).
 */
public final class ControllerRuntime implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ControllerRuntime.class);

  private static final Duration SYNC_CHECK = Duration.ofMillis(20);

  private final List<ManagedController> controllers;
  private final LeaderElector elector;
  private final Duration shutdownGrace;
  private final Runnable afterFirstSync;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final AtomicBoolean closing = new AtomicBoolean();
  private volatile boolean leaseLost;
  private Controller root;

  /** Gives the heap back after the first sync. */
  public ControllerRuntime(
      List<ManagedController> controllers, LeaderElector elector, Duration shutdownGrace) {
    this(controllers, elector, shutdownGrace, ControllerRuntime::giveHeapBack);
  }

  /**
   * @param elector gates the workers of every controller; null runs them at once
   * @param shutdownGrace how long {@link #close()} waits for reconciles in flight, in all
   * @param afterFirstSync runs once, on a thread of its own, once every cache first synced
   */
  public ControllerRuntime(
      List<ManagedController> controllers,
      LeaderElector elector,
      Duration shutdownGrace,
      Runnable afterFirstSync) {
    if (controllers.isEmpty()) {
      throw new IllegalArgumentException("no controllers to run");
    }
    this.controllers = List.copyOf(controllers);
    this.elector = elector;
    this.shutdownGrace = shutdownGrace;
    this.afterFirstSync = afterFirstSync;
  }

  /**
   * The first lists' garbage has reached the old generation by the time the caches sync; collecting
   * it lets the JVM give the memory back (-XX:MaxHeapFreeRatio). Several collections: the serial
   * collector shrinks the heap in steps (ShrinkHeapInSteps); turning that off for the whole process
   * made start-up slower.
   */
  static void giveHeapBack() {
    for (int i = 0; i < 4; i++) {
      System.gc();
    }
  }

  /** Starts informers and, on a thread of its own, the workers once leading. */
  public synchronized ControllerRuntime start() {
    if (root != null || closing.get()) {
      return this;
    }
    Controller workers =
        new ControllerManager(
            new SharedInformerFactory(new ApiClient().setReadTimeout(0)),
            controllers.stream().map(Workers::new).toArray(Controller[]::new));
    root = elector == null ? workers : new LeaderElectingController(elector, workers);
    controllers.forEach(ManagedController::start);
    factories().forEach(SharedInformerFactory::startAllRegisteredInformers);
    Thread.ofPlatform().name("controllers").start(this::run);
    Thread.ofPlatform().name("after-first-sync").daemon().start(this::awaitFirstSync);
    log.info(
        "controllers started names={} leaderElection={}",
        controllers.stream().map(ManagedController::name).toList(),
        elector != null);
    return this;
  }

  private void awaitFirstSync() {
    if (sleepUntil(this::ready, closing::get)) {
      afterFirstSync.run();
    }
  }

  /** Until {@code done}, else false at {@code stop} or an interrupt; Wait.poll spins a core. */
  private static boolean sleepUntil(BooleanSupplier done, BooleanSupplier stop) {
    while (!stop.getAsBoolean() && !done.getAsBoolean()) {
      try {
        Thread.sleep(SYNC_CHECK.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return !stop.getAsBoolean();
  }

  private void run() {
    try {
      root.run();
    } catch (Throwable t) {
      log.error("controllers stopped unexpectedly", t);
    } finally {
      if (elector != null && !closing.get()) {
        leaseLost = true;
        log.error("leader election lost, stopping");
      }
      stopped.countDown();
    }
  }

  private List<SharedInformerFactory> factories() {
    return controllers.stream().flatMap(c -> c.informerFactories().stream()).distinct().toList();
  }

  /** What /readyz reports. */
  public boolean ready() {
    return controllers.stream().allMatch(ManagedController::hasSynced);
  }

  /** Blocks until the controllers stop; true when they stopped because the lease was lost. */
  public boolean awaitTermination() throws InterruptedException {
    stopped.await();
    return leaseLost;
  }

  /** Stops the workers, waits for reconciles in flight, gives the lease up. */
  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    Controller r;
    synchronized (this) {
      r = root;
    }
    if (r != null) {
      r.shutdown();
      awaitReconciles();
    }
    if (elector != null) {
      elector.close();
    }
    factories().forEach(f -> f.stopAllRegisteredInformers(true));
    for (ManagedController c : controllers) {
      try {
        c.close();
      } catch (Exception e) {
        log.debug("close failed controller={}", c.name(), e);
      }
    }
    stopped.countDown();
  }

  private void awaitReconciles() {
    long deadline = System.nanoTime() + shutdownGrace.toNanos();
    for (ManagedController c : controllers) {
      if (c.workers() instanceof DefaultController dc && dc.getWorkerThreadPool() != null) {
        ExecutorService pool = dc.getWorkerThreadPool();
        try {
          if (!pool.awaitTermination(
              Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            log.warn("reconciles still running at shutdown, leaving them controller={}", c.name());
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** One controller's workers, as the ControllerManager runs them. */
  private static final class Workers implements Controller {
    private final ManagedController controller;
    private final AtomicBoolean stopping = new AtomicBoolean();

    Workers(ManagedController controller) {
      this.controller = controller;
    }

    @Override
    public void run() {
      // Here, so that the client's DefaultController's own (spinning) wait passes at once.
      if (!sleepUntil(controller::hasSynced, stopping::get)) {
        return;
      }
      try {
        controller.workers().run();
      } catch (RejectedExecutionException e) {
        // A stop that came between the check above and the workers' start: their pool is shut.
        if (!stopping.get()) {
          throw e;
        }
      }
    }

    @Override
    public void shutdown() {
      if (stopping.compareAndSet(false, true)) {
        controller.stopping();
      }
      controller.workers().shutdown();
    }
  }
}
