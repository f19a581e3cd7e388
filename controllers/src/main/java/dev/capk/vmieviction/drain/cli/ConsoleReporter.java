package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.NodeDrainer.DrainOutput;
import java.io.PrintStream;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Prints the drains' kubectl lines. On a terminal, also one status line under them ("3 nodes, 41
 * pods left, 2 refused by PodDisruptionBudget db"), redrawn while the drains wait, so a long wait
 * is not silent; off a terminal (pipes, files, tests) the output is exactly kubectl's. One reporter
 * serves the drains of all nodes, from their threads.
 */
final class ConsoleReporter implements DrainOutput, AutoCloseable {
  private static final String CLEAR = "\r\033[K";
  private static final long REDRAW_MILLIS = 500;

  private final PrintStream out;
  private final PrintStream err;
  private final int nodes;

  /** Per node: how many pods are left, and the budgets refusing each refused one. */
  private final Map<String, Awaiting> awaiting = new ConcurrentHashMap<>();

  /** Redraws the status line; null off a terminal. */
  private final ScheduledExecutorService redraw;

  private boolean shown;

  private record Awaiting(int left, List<Set<String>> refusedBy) {}

  ConsoleReporter(PrintStream out, PrintStream err, boolean terminal, int nodes) {
    this.out = out;
    this.err = err;
    this.nodes = nodes;
    this.redraw =
        terminal
            ? Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("progress-line").daemon().factory())
            : null;
    if (redraw != null) {
      redraw.scheduleWithFixedDelay(this::draw, 0, REDRAW_MILLIS, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void out(String line) {
    println(out, line);
  }

  @Override
  public void err(String line) {
    println(err, line);
  }

  @Override
  public void awaiting(String node, int left, Collection<Set<String>> refusedBy) {
    awaiting.put(node, new Awaiting(left, List.copyOf(refusedBy)));
  }

  /** Prints one of kubectl's lines, on a cleared line when the status line is shown. */
  private synchronized void println(PrintStream stream, String line) {
    clear();
    stream.println(line);
    stream.flush();
  }

  /** The status line's text. */
  String status() {
    int left = awaiting.values().stream().mapToInt(Awaiting::left).sum();
    List<Set<String>> refused =
        awaiting.values().stream().flatMap(a -> a.refusedBy().stream()).toList();
    String budgets =
        refused.stream().flatMap(Set::stream).sorted().distinct().collect(Collectors.joining(", "));
    return (nodes == 1 ? "1 node, " : nodes + " nodes, ")
        + (left == 1 ? "1 pod left" : left + " pods left")
        + (refused.isEmpty()
            ? ""
            : ", %d refused by PodDisruptionBudget %s"
                .formatted(refused.size(), budgets.isEmpty() ? "?" : budgets));
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
