package dev.capk.vmieviction.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.extended.controller.builder.ControllerBuilder;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.extended.workqueue.DefaultRateLimitingQueue;
import io.kubernetes.client.extended.workqueue.RateLimitingQueue;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The runtime with in-memory controllers: no informers, no API server. */
class ControllerRuntimeTest {

  /** A controller whose caches sync when told, and whose lifecycle calls are written down. */
  static class FakeController implements ManagedController {
    final String name;
    final List<String> calls;
    final AtomicBoolean synced = new AtomicBoolean();
    final CountDownLatch running = new CountDownLatch(1);
    final CountDownLatch stop = new CountDownLatch(1);
    final Controller workers =
        new Controller() {
          @Override
          public void run() {
            calls.add(name + ".run");
            running.countDown();
            try {
              stop.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }

          @Override
          public void shutdown() {
            calls.add(name + ".shutdown");
            stop.countDown();
          }
        };

    FakeController(String name, List<String> calls) {
      this.name = name;
      this.calls = calls;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public List<SharedInformerFactory> informerFactories() {
      return List.of();
    }

    @Override
    public boolean hasSynced() {
      return synced.get();
    }

    @Override
    public Controller workers() {
      return workers;
    }

    @Override
    public void start() {
      calls.add(name + ".start");
    }

    @Override
    public void stopping() {
      calls.add(name + ".stopping");
    }

    @Override
    public void close() {
      calls.add(name + ".close");
    }
  }

  @Test
  void readyOnlyOnceEveryControllersCachesSynced() {
    List<String> calls = new CopyOnWriteArrayList<>();
    FakeController vmis = new FakeController("vmis", calls);
    FakeController maintenances = new FakeController("maintenances", calls);
    try (ControllerRuntime runtime =
        new ControllerRuntime(List.of(vmis, maintenances), null, Duration.ofSeconds(5)).start()) {
      assertFalse(runtime.ready());
      vmis.synced.set(true);
      assertFalse(runtime.ready(), "the NodeMaintenance caches have not synced yet");
      maintenances.synced.set(true);
      assertTrue(runtime.ready());
    }
  }

  @Test
  void everyControllersWorkersRunAndEachCancelsItsWorkBeforeItsWorkersStop() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    FakeController vmis = new FakeController("vmis", calls);
    FakeController maintenances = new FakeController("maintenances", calls);
    vmis.synced.set(true);
    maintenances.synced.set(true);
    ControllerRuntime runtime =
        new ControllerRuntime(List.of(vmis, maintenances), null, Duration.ofSeconds(5));
    runtime.start();
    assertTrue(vmis.running.await(10, TimeUnit.SECONDS));
    assertTrue(maintenances.running.await(10, TimeUnit.SECONDS));

    runtime.close();

    assertFalse(runtime.awaitTermination(), "closed, not a lost lease");
    for (String c : List.of("vmis", "maintenances")) {
      List<String> own = calls.stream().filter(s -> s.startsWith(c + ".")).toList();
      assertEquals(
          List.of(c + ".start", c + ".run", c + ".stopping", c + ".shutdown", c + ".close"), own);
    }
  }

  /**
   * The client's DefaultController would spin a core in its own wait for the caches (Wait.poll):
   * its run() is called only once they have synced.
   */
  @Test
  void workersRunOnlyOnceTheirCachesSynced() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    FakeController vmis = new FakeController("vmis", calls);
    try (ControllerRuntime runtime =
        new ControllerRuntime(List.of(vmis), null, Duration.ofSeconds(5)).start()) {
      assertFalse(
          vmis.running.await(300, TimeUnit.MILLISECONDS), "workers ran before the caches synced");
      vmis.synced.set(true);
      assertTrue(vmis.running.await(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void afterFirstSyncRunsOnceWhenEveryCacheSynced() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    FakeController vmis = new FakeController("vmis", calls);
    java.util.concurrent.atomic.AtomicInteger runs =
        new java.util.concurrent.atomic.AtomicInteger();
    CountDownLatch ran = new CountDownLatch(1);
    try (ControllerRuntime runtime =
        new ControllerRuntime(
                List.of(vmis),
                null,
                Duration.ofSeconds(5),
                () -> {
                  runs.incrementAndGet();
                  ran.countDown();
                })
            .start()) {
      assertFalse(ran.await(300, TimeUnit.MILLISECONDS), "ran before the caches synced");
      vmis.synced.set(true);
      assertTrue(ran.await(10, TimeUnit.SECONDS));
      assertTrue(vmis.running.await(10, TimeUnit.SECONDS));
      assertEquals(1, runs.get());
    }
  }

  @Test
  void closeWaitsForAReconcileInFlight() throws Exception {
    CountDownLatch reconciling = new CountDownLatch(1);
    AtomicBoolean finished = new AtomicBoolean();
    RateLimitingQueue<Request> queue = new DefaultRateLimitingQueue<>();
    Controller slowWorkers =
        ControllerBuilder.defaultBuilder(
                new SharedInformerFactory(new ApiClient().setReadTimeout(0)))
            .withName("slow")
            .withWorkQueue(queue)
            .withWorkerCount(1)
            .withReconciler(
                request -> {
                  reconciling.countDown();
                  try {
                    Thread.sleep(500); // a drain pass still talking to a guest
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return new Result(false);
                  }
                  finished.set(true);
                  return new Result(false);
                })
            .build();
    ControllerRuntime runtime =
        new ControllerRuntime(
            List.of(
                new FakeController("slow", new CopyOnWriteArrayList<>()) {
                  {
                    synced.set(true);
                  }

                  @Override
                  public Controller workers() {
                    return slowWorkers;
                  }
                }),
            null,
            Duration.ofSeconds(30));
    runtime.start();
    queue.add(new Request("ns", "vmi"));
    assertTrue(reconciling.await(10, TimeUnit.SECONDS));

    runtime.close();

    assertTrue(finished.get(), "close returned while a reconcile was still running");
  }
}
