package dev.capk.vmieviction.e2e.integration.drain;

import dev.capk.vmieviction.drain.NodeDrainer.DrainProgressListener;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SkippedPod;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * Records a drain's callbacks as lines ("evicted ns/name"); a latch opens on the first PDB block.
 */
final class RecordingListener implements DrainProgressListener {
  final List<String> events = new ArrayList<>();
  final CountDownLatch firstBlock = new CountDownLatch(1);
  volatile Set<String> lastBudgets = Set.of();

  /** The plan's pods left in place and the pods no longer waited for, with the reasons. */
  final List<SkippedPod> skipped = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** The plan's warnings, as kubectl prints them. */
  volatile List<String> warnings = List.of();

  private synchronized void add(String line) {
    events.add(line);
  }

  synchronized List<String> events() {
    return List.copyOf(events);
  }

  synchronized List<String> eventsFor(PodRef pod) {
    return events.stream()
        .filter(e -> e.endsWith(" " + pod))
        .map(e -> e.substring(0, e.indexOf(' ')))
        .toList();
  }

  @Override
  public void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {
    this.skipped.addAll(skipped);
    this.warnings = List.copyOf(warnings);
    add("planned " + toEvict.size() + " " + skipped.size());
  }

  @Override
  public void evicting(PodRef pod, boolean usingEviction) {
    add((usingEviction ? "evicting " : "deleting ") + pod);
  }

  @Override
  public void blocked(PodRef pod, Set<String> budgets, String message) {
    lastBudgets = budgets;
    add("blocked " + pod);
    firstBlock.countDown();
  }

  @Override
  public void retrying(PodRef pod, String reason) {
    add("retrying " + pod);
  }

  @Override
  public void gone(PodRef pod, boolean usingEviction) {
    add((usingEviction ? "evicted " : "deleted ") + pod);
  }

  @Override
  public void notWaitedFor(PodRef pod, String reason) {
    skipped.add(new SkippedPod(pod, reason));
    add("notWaited " + pod);
  }

  @Override
  public void failed(PodRef pod, String reason) {
    add("failed " + pod);
  }
}
