package dev.capk.vmieviction.runtime;

import io.kubernetes.client.extended.workqueue.RateLimitingQueue;
import io.kubernetes.client.extended.workqueue.ratelimiter.DefaultControllerRateLimiter;
import io.kubernetes.client.extended.workqueue.ratelimiter.RateLimiter;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A rate-limited work queue with two lanes: items added with {@link #addFirst} (what can finish an
 * evacuation now: its guest node's pods left) go to workers before the rest, so hundreds of retries
 * of blocked drains never stand between a finished drain and its VMI's deletion. Otherwise as the
 * client's {@code DefaultRateLimitingQueue}: one worker per item at a time, an item added while
 * worked on comes back after, added while waiting waits once (first lane if either add asked);
 * {@link #addAfter} keeps an item's earliest pending time.
 */
public final class TwoLaneWorkQueue<T> implements RateLimitingQueue<T> {

  private final ArrayDeque<T> first = new ArrayDeque<>();
  private final ArrayDeque<T> rest = new ArrayDeque<>();
  private final Set<T> dirty = new HashSet<>();
  private final Set<T> dirtyFirst = new HashSet<>();
  private final Set<T> processing = new HashSet<>();
  private final Map<T, Pending> pending = new HashMap<>();
  private final RateLimiter<T> limiter = new DefaultControllerRateLimiter<>();
  private final ScheduledExecutorService timer;
  private boolean shuttingDown;

  private record Pending(long readyAtNanos, ScheduledFuture<?> future) {}

  public TwoLaneWorkQueue(String name) {
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name(name + "-delays").daemon().factory());
  }

  @Override
  public void add(T item) {
    enqueue(item, false);
  }

  /** Adds the item ahead of every item added the ordinary way. */
  public void addFirst(T item) {
    enqueue(item, true);
  }

  private synchronized void enqueue(T item, boolean urgent) {
    if (shuttingDown) {
      return;
    }
    if (dirty.contains(item)) {
      if (urgent && dirtyFirst.add(item) && !processing.contains(item) && rest.remove(item)) {
        first.add(item);
      }
      return;
    }
    dirty.add(item);
    if (urgent) {
      dirtyFirst.add(item);
    }
    if (!processing.contains(item)) { // else it comes back when its worker is done
      (urgent ? first : rest).add(item);
      notify();
    }
  }

  @Override
  public synchronized int length() {
    return first.size() + rest.size();
  }

  /** Blocks while there is none; null once shut down. */
  @Override
  public synchronized T get() throws InterruptedException {
    while (first.isEmpty() && rest.isEmpty() && !shuttingDown) {
      wait();
    }
    if (first.isEmpty() && rest.isEmpty()) {
      return null;
    }
    T item = first.isEmpty() ? rest.poll() : first.poll();
    processing.add(item);
    dirty.remove(item);
    dirtyFirst.remove(item);
    return item;
  }

  @Override
  public synchronized void done(T item) {
    processing.remove(item);
    if (dirty.contains(item)) {
      (dirtyFirst.contains(item) ? first : rest).add(item);
      notify();
    }
  }

  @Override
  public synchronized void shutDown() {
    shuttingDown = true;
    notifyAll();
    timer.shutdownNow();
  }

  @Override
  public synchronized boolean isShuttingDown() {
    return shuttingDown;
  }

  @Override
  public synchronized void addAfter(T item, Duration delay) {
    if (delay == null || delay.isZero() || delay.isNegative()) {
      add(item);
      return;
    }
    if (shuttingDown) {
      return;
    }
    long readyAt = System.nanoTime() + delay.toNanos();
    Pending earlier = pending.get(item);
    if (earlier != null) {
      if (earlier.readyAtNanos - readyAt <= 0) {
        return; // already due no later than asked
      }
      earlier.future.cancel(false);
    }
    ScheduledFuture<?> f =
        timer.schedule(() -> fire(item, readyAt), delay.toNanos(), TimeUnit.NANOSECONDS);
    pending.put(item, new Pending(readyAt, f));
  }

  private synchronized void fire(T item, long readyAt) {
    Pending p = pending.get(item);
    if (p != null && p.readyAtNanos == readyAt) {
      pending.remove(item);
    }
    add(item);
  }

  @Override
  public void addRateLimited(T item) {
    addAfter(item, limiter.when(item));
  }

  @Override
  public void forget(T item) {
    limiter.forget(item);
  }

  @Override
  public int numRequeues(T item) {
    return limiter.numRequeues(item);
  }
}
