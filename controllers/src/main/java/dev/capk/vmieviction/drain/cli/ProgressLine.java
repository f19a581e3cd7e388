package dev.capk.vmieviction.drain.cli;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainProgressListener;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SkippedPod;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * On a terminal, one status line under kubectl's output ("3 nodes, 41 pods left, 2 refused by
 * PodDisruptionBudget db"), redrawn while a drain waits, so a long wait is not silent. Off a
 * terminal (pipes, files, tests) it does nothing and the output is exactly kubectl's.
 */
class ProgressLine implements AutoCloseable {
  private static final String CLEAR = "\r\033[K";
  private static final long REDRAW_MILLIS = 500;

  /** Off a terminal: streams pass through, listeners are not wrapped. */
  static ProgressLine start(boolean terminal, PrintStream terminalOut, int nodes) {
    return terminal ? new Live(terminalOut, nodes) : new ProgressLine();
  }

  /** The stream to print kubectl's lines on: clears the status line first when there is one. */
  PrintStream out(PrintStream stream) {
    return stream;
  }

  /** A listener that also counts for the status line. */
  DrainProgressListener tracking(DrainProgressListener listener) {
    return listener;
  }

  /** Removes the status line, before lines printed directly. */
  void clear() {}

  @Override
  public void close() {}

  static final class Live extends ProgressLine {
    private final PrintStream terminal;
    private final int nodes;
    private final Set<PodRef> left = ConcurrentHashMap.newKeySet();
    private final Map<PodRef, Set<String>> refused = new ConcurrentHashMap<>();
    private final ScheduledExecutorService redraw;
    private boolean shown;

    Live(PrintStream terminal, int nodes) {
      this.terminal = terminal;
      this.nodes = nodes;
      this.redraw =
          Executors.newSingleThreadScheduledExecutor(
              new ThreadFactoryBuilder().setNameFormat("progress-line").setDaemon(true).build());
      redraw.scheduleWithFixedDelay(this::draw, 0, REDRAW_MILLIS, TimeUnit.MILLISECONDS);
    }

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
      terminal.print(CLEAR + status());
      terminal.flush();
      shown = true;
    }

    @Override
    synchronized void clear() {
      if (shown) {
        terminal.print(CLEAR);
        terminal.flush();
        shown = false;
      }
    }

    @Override
    PrintStream out(PrintStream stream) {
      Live self = this;
      return new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8) {
        @Override
        public void println(String line) {
          synchronized (self) {
            self.clear();
            stream.println(line);
            stream.flush();
          }
        }
      };
    }

    @Override
    DrainProgressListener tracking(DrainProgressListener listener) {
      return new DrainProgressListener() {
        @Override
        public void cordoned(String node, boolean changed) {
          listener.cordoned(node, changed);
        }

        @Override
        public void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> w) {
          left.addAll(toEvict);
          listener.planned(toEvict, skipped, w);
        }

        @Override
        public void evicting(PodRef pod, boolean usingEviction) {
          listener.evicting(pod, usingEviction);
        }

        @Override
        public void blocked(PodRef pod, Set<String> budgets, String message) {
          refused.put(pod, Set.copyOf(budgets));
          listener.blocked(pod, budgets, message);
        }

        @Override
        public void retrying(PodRef pod, String reason) {
          listener.retrying(pod, reason);
        }

        @Override
        public void evicted(PodRef pod) {
          done(pod);
          listener.evicted(pod);
        }

        @Override
        public void deleted(PodRef pod) {
          done(pod);
          listener.deleted(pod);
        }

        @Override
        public void notWaitedFor(PodRef pod, String reason) {
          done(pod);
          listener.notWaitedFor(pod, reason);
        }

        @Override
        public void failed(PodRef pod, String reason) {
          done(pod);
          listener.failed(pod, reason);
        }
      };
    }

    private void done(PodRef pod) {
      left.remove(pod);
      refused.remove(pod);
    }

    @Override
    public void close() {
      redraw.shutdownNow();
      clear();
    }
  }
}
