package dev.capk.vmieviction.drain.cli;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.NodeDrainer.DrainProgressListener;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SkippedPod;
import dev.capk.vmieviction.time.GoDuration;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Prints the drains' progress the way kubectl does, so operators and scripts read familiar lines.
 * On a terminal, also one status line under them ("3 nodes, 41 pods left, 2 refused by
 * PodDisruptionBudget db"), redrawn while the drains wait, so a long wait is not silent; off a
 * terminal (pipes, files, tests) the output is exactly kubectl's. One reporter serves the drains of
 * all nodes, from their threads.
 */
final class ConsoleReporter implements DrainProgressListener, AutoCloseable {
  private static final String CLEAR = "\r\033[K";
  private static final long REDRAW_MILLIS = 500;

  private final PrintStream out;
  private final PrintStream err;
  private final DryRun dryRun;
  private final Duration retryInterval;
  private final int nodes;
  private final Set<PodRef> left = ConcurrentHashMap.newKeySet();
  private final Map<PodRef, Set<String>> refused = new ConcurrentHashMap<>();

  /** Redraws the status line; null off a terminal. */
  private final ScheduledExecutorService redraw;

  private boolean shown;

  ConsoleReporter(
      PrintStream out,
      PrintStream err,
      DryRun dryRun,
      Duration retryInterval,
      boolean terminal,
      int nodes) {
    this.out = out;
    this.err = err;
    this.dryRun = dryRun;
    this.retryInterval = retryInterval;
    this.nodes = nodes;
    this.redraw =
        terminal
            ? Executors.newSingleThreadScheduledExecutor(
                new ThreadFactoryBuilder().setNameFormat("progress-line").setDaemon(true).build())
            : null;
    if (redraw != null) {
      redraw.scheduleWithFixedDelay(this::draw, 0, REDRAW_MILLIS, TimeUnit.MILLISECONDS);
    }
  }

  /** Prints one of kubectl's lines, on a cleared line when the status line is shown. */
  synchronized void println(PrintStream stream, String line) {
    clear();
    stream.println(line);
    stream.flush();
  }

  @Override
  public void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {
    left.addAll(toEvict);
    for (String w : warnings) {
      println(err, "Warning: " + w);
    }
  }

  @Override
  public void evicting(PodRef pod, boolean usingEviction) {
    // kubectl announces evictions (and, in a client dry run, whatever would go) but not deletions.
    if (usingEviction || dryRun == DryRun.CLIENT) {
      println(out, "evicting pod " + pod + dryRun.suffix());
    }
  }

  @Override
  public void blocked(PodRef pod, Set<String> budgets, String message) {
    refused.put(pod, Set.copyOf(budgets));
    String names =
        budgets.isEmpty()
            ? ""
            : " [PodDisruptionBudget " + String.join(", ", new TreeSet<>(budgets)) + "]";
    println(
        err,
        evictionError(pod)
            + " (will retry after "
            + GoDuration.format(retryInterval)
            + "): "
            + message
            + names);
  }

  @Override
  public void retrying(PodRef pod, String reason) {
    println(err, evictionError(pod) + " (will retry): " + reason);
  }

  @Override
  public void gone(PodRef pod, boolean usingEviction) {
    done(pod);
    println(out, "pod/" + pod.name() + (usingEviction ? " evicted" : " deleted"));
  }

  @Override
  public void notWaitedFor(PodRef pod, String reason) {
    done(pod);
    println(out, "pod \"" + pod.name() + "\" " + reason + ", skipping");
  }

  @Override
  public void failed(PodRef pod, String reason) {
    done(pod);
    println(err, evictionError(pod) + ": " + reason);
  }

  /** kubectl's start of a line about a pod's eviction. */
  static String evictionError(PodRef pod) {
    return "error when evicting pods/\"" + pod.name() + "\" -n \"" + pod.namespace() + "\"";
  }

  private void done(PodRef pod) {
    left.remove(pod);
    refused.remove(pod);
  }

  /** The status line's text. */
  String status() {
    Set<String> budgets = new TreeSet<>();
    refused.values().forEach(budgets::addAll);
    return (nodes == 1 ? "1 node" : nodes + " nodes")
        + ", "
        + left.size()
        + (left.size() == 1 ? " pod" : " pods")
        + " left"
        + (refused.isEmpty()
            ? ""
            : ", "
                + refused.size()
                + " refused by PodDisruptionBudget "
                + (budgets.isEmpty() ? "?" : String.join(", ", budgets)));
  }

  private synchronized void draw() {
    out.print(CLEAR + status());
    out.flush();
    shown = true;
  }

  private synchronized void clear() {
    if (shown) {
      out.print(CLEAR);
      out.flush();
      shown = false;
    }
  }

  @Override
  public void close() {
    if (redraw != null) {
      redraw.shutdownNow();
    }
    clear();
  }
}
