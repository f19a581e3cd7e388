package dev.capk.vmieviction.events;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Events off the caller's thread, as client-go's broadcaster does (under load the round
 * trips cost a step more than its real work). One lane per object key keeps an object's events in
 * order; a full lane drops the event, logged.
 */
public final class EventWriters implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(EventWriters.class);

  private final List<ThreadPoolExecutor> lanes = new ArrayList<>();

  /** {@code lanes} events in flight at once, {@code queuePerLane} waiting before drops. */
  public EventWriters(String name, int lanes, int queuePerLane) {
    for (int i = 0; i < lanes; i++) {
      ThreadPoolExecutor lane =
          new ThreadPoolExecutor(
              1,
              1,
              30,
              TimeUnit.SECONDS,
              new ArrayBlockingQueue<>(queuePerLane),
              new ThreadFactoryBuilder().setNameFormat(name + "-" + i).setDaemon(true).build());
      lane.allowCoreThreadTimeOut(true);
      this.lanes.add(lane);
    }
  }

  /** After every earlier write of the same {@code objectKey}. */
  public void submit(String objectKey, Runnable write) {
    ThreadPoolExecutor lane = lanes.get(Math.floorMod(objectKey.hashCode(), lanes.size()));
    try {
      lane.execute(write);
    } catch (RejectedExecutionException e) {
      log.info("event not recorded, too many waiting to be written object={}", objectKey);
    }
  }

  /** Writes what is waiting, for at most two seconds, then stops. */
  @Override
  public void close() {
    lanes.forEach(ThreadPoolExecutor::shutdown);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    for (ThreadPoolExecutor lane : lanes) {
      try {
        long left = until - System.nanoTime();
        if (left <= 0 || !lane.awaitTermination(left, TimeUnit.NANOSECONDS)) {
          lane.shutdownNow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        lane.shutdownNow();
      }
    }
  }
}
