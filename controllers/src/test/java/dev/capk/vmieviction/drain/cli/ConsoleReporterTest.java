package dev.capk.vmieviction.drain.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The status line shown on a terminal while a drain waits, and its absence elsewhere. */
class ConsoleReporterTest {

  private static ConsoleReporter reporter(PrintStream out, boolean terminal, int nodes) {
    return new ConsoleReporter(out, out, terminal, nodes);
  }

  @Test
  void onATerminalTheLineCountsPodsLeftAndNamesTheRefusingBudgetsAndIsClearedBeforeKubectlsLines()
      throws Exception {
    ByteArrayOutputStream screen = new ByteArrayOutputStream();
    PrintStream terminal = new PrintStream(screen, true, StandardCharsets.UTF_8);
    try (ConsoleReporter reporter = reporter(terminal, true, 2)) {
      reporter.awaiting("n1", 2, List.of(Set.of("web-pdb")));
      reporter.err("error when evicting pods/\"web-1\" -n \"app\" (will retry after 5s): Cannot");
      String status = "2 nodes, 2 pods left, 1 refused by PodDisruptionBudget web-pdb";
      assertEquals(status, reporter.status());
      // The line is redrawn in the background (the blocked line cleared it): wait until it shows.
      screen.reset();
      for (int i = 0; i < 100 && !screen.toString(StandardCharsets.UTF_8).contains(status); i++) {
        Thread.sleep(50);
      }
      assertTrue(screen.toString(StandardCharsets.UTF_8).contains("\r\033[K" + status));

      reporter.awaiting("n1", 1, List.of(Set.of("web-pdb")));
      reporter.out("pod/web-0 evicted");
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
      reporter.awaiting("n1", 1, List.of());
      reporter.out("evicting pod app/web-0");
    }
    assertEquals("evicting pod app/web-0\n", out.toString(StandardCharsets.UTF_8));
  }
}
