package dev.capk.vmieviction.e2e.integration.drain;

import dev.capk.vmieviction.drain.NodeDrainer.DrainOutput;
import dev.capk.vmieviction.drain.PodRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Records a drain's kubectl lines (standard error's prefixed "err: "); a latch opens on the first
 * eviction a PodDisruptionBudget refused.
 */
final class RecordingOutput implements DrainOutput {
  private static final Pattern BUDGETS = Pattern.compile("\\[PodDisruptionBudget ([^]]*)]$");

  private final List<String> lines = new ArrayList<>();
  final CountDownLatch firstBlock = new CountDownLatch(1);
  volatile Set<String> lastBudgets = Set.of();

  @Override
  public synchronized void out(String line) {
    lines.add(line);
  }

  @Override
  public synchronized void err(String line) {
    lines.add("err: " + line);
    if (line.contains(" (will retry after ")) {
      Matcher m = BUDGETS.matcher(line);
      lastBudgets = m.find() ? Set.of(m.group(1).split(", ")) : Set.of();
      firstBlock.countDown();
    }
  }

  synchronized List<String> lines() {
    return List.copyOf(lines);
  }

  /** kubectl's warnings ("Warning: " lines), without that prefix. */
  synchronized List<String> warnings() {
    return lines.stream()
        .filter(l -> l.startsWith("err: Warning: "))
        .map(l -> l.substring("err: Warning: ".length()))
        .toList();
  }

  /**
   * What the lines said of a pod, in order: "evicting", "evicted" or "deleted" ("pod/x evicted"
   * names no namespace: tests use one namespace per drain).
   */
  synchronized List<String> eventsFor(PodRef pod) {
    List<String> events = new ArrayList<>();
    for (String l : lines) {
      if (l.equals("evicting pod " + pod)) {
        events.add("evicting");
      } else if (l.equals("pod/" + pod.name() + " evicted")) {
        events.add("evicted");
      } else if (l.equals("pod/" + pod.name() + " deleted")) {
        events.add("deleted");
      }
    }
    return events;
  }
}
