package dev.capk.vmieviction.drain.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.PodRef;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The status line shown on a terminal while a drain waits, and its absence elsewhere. */
class ConsoleReporterTest {

  static final PodRef WEB_0 = new PodRef("app", "web-0", "u0");
  static final PodRef WEB_1 = new PodRef("app", "web-1", "u1");

  private static ConsoleReporter reporter(PrintStream out, boolean terminal, int nodes) {
    return new ConsoleReporter(out, out, DryRun.NONE, Duration.ofSeconds(5), terminal, nodes);
  }

  @Test
  void onATerminalTheLineCountsPodsLeftAndNamesTheRefusingBudgetsAndIsClearedBeforeKubectlsLines()
      throws Exception {
    ByteArrayOutputStream screen = new ByteArrayOutputStream();
    PrintStream terminal = new PrintStream(screen, true, StandardCharsets.UTF_8);
    try (ConsoleReporter reporter = reporter(terminal, true, 2)) {
      reporter.planned(List.of(WEB_0, WEB_1), List.of(), List.of());
      reporter.blocked(WEB_1, Set.of("web-pdb"), "Cannot evict pod");
      String status = "2 nodes, 2 pods left, 1 refused by PodDisruptionBudget web-pdb";
      assertEquals(status, reporter.status());
      // The line is redrawn in the background (the blocked line cleared it): wait until it shows.
      screen.reset();
      for (int i = 0; i < 100 && !screen.toString(StandardCharsets.UTF_8).contains(status); i++) {
        Thread.sleep(50);
      }
      assertTrue(screen.toString(StandardCharsets.UTF_8).contains("\r\033[K" + status));

      reporter.gone(WEB_0, true);
      assertEquals(
          "2 nodes, 1 pod left, 1 refused by PodDisruptionBudget web-pdb", reporter.status());
    }
    String shown = screen.toString(StandardCharsets.UTF_8);
    // kubectl's line starts on a cleared line, never after the status text.
    String before = shown.substring(0, shown.indexOf("pod/web-0 evicted\n"));
    assertTrue(before.endsWith("\r\033[K"), shown);
  }

  @Test
  void offATerminalKubectlsLinesPassThroughUntouched() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream stream = new PrintStream(out, true, StandardCharsets.UTF_8);
    try (ConsoleReporter reporter = reporter(stream, false, 1)) {
      reporter.planned(List.of(WEB_0), List.of(), List.of());
      reporter.evicting(WEB_0, true);
    }
    assertEquals("evicting pod app/web-0\n", out.toString(StandardCharsets.UTF_8));
  }
}
