package dev.capk.vmieviction.drain;

import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps the caller's listener: serializes its calls, keeps its exceptions from breaking the drain,
 * and drops calls once the drain has returned (an eviction thread may still be finishing a
 * request).
 */
final class SafeListener implements DrainProgressListener {
  private static final Logger LOG = LoggerFactory.getLogger(SafeListener.class);

  private final DrainProgressListener delegate;
  private boolean closed;

  SafeListener(DrainProgressListener delegate) {
    this.delegate = delegate;
  }

  synchronized void close() {
    closed = true;
  }

  private synchronized void call(String what, Runnable r) {
    if (closed) {
      return;
    }
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.warn("drain progress listener failed callback={} error={}", what, e.toString());
    }
  }

  @Override
  public void cordoned(String node, boolean changed) {
    call("cordoned", () -> delegate.cordoned(node, changed));
  }

  @Override
  public void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {
    call("planned", () -> delegate.planned(toEvict, skipped, warnings));
  }

  @Override
  public void evicting(PodRef pod, boolean usingEviction) {
    call("evicting", () -> delegate.evicting(pod, usingEviction));
  }

  @Override
  public void blocked(PodRef pod, Set<String> budgets, String message) {
    call("blocked", () -> delegate.blocked(pod, budgets, message));
  }

  @Override
  public void retrying(PodRef pod, String reason) {
    call("retrying", () -> delegate.retrying(pod, reason));
  }

  @Override
  public void evicted(PodRef pod) {
    call("evicted", () -> delegate.evicted(pod));
  }

  @Override
  public void deleted(PodRef pod) {
    call("deleted", () -> delegate.deleted(pod));
  }

  @Override
  public void notWaitedFor(PodRef pod, String reason) {
    call("notWaitedFor", () -> delegate.notWaitedFor(pod, reason));
  }

  @Override
  public void failed(PodRef pod, String reason) {
    call("failed", () -> delegate.failed(pod, reason));
  }
}
