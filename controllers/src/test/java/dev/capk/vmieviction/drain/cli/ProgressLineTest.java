package dev.capk.vmieviction.drain.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.DrainProgressListener;
import dev.capk.vmieviction.drain.PodRef;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The status line shown on a terminal while a drain waits, and its absence elsewhere. */
class ProgressLineTest {

  static final PodRef WEB_0 = new PodRef("app", "web-0", "u0");
  static final PodRef WEB_1 = new PodRef("app", "web-1", "u1");

  @Test
  void onATerminalTheLineCountsPodsLeftAndNamesTheRefusingBudgetsAndIsClearedBeforeKubectlsLines()
      throws Exception {
    ByteArrayOutputStream screen = new ByteArrayOutputStream();
    PrintStream terminal = new PrintStream(screen, true, StandardCharsets.UTF_8);
    try (ProgressLine progress = ProgressLine.start(true, terminal, 2)) {
      DrainProgressListener listener = progress.tracking(new DrainProgressListener() {});
      listener.planned(List.of(WEB_0, WEB_1), List.of(), List.of());
      listener.blocked(WEB_1, Set.of("web-pdb"), "Cannot evict pod");
      listener.evicted(WEB_0);
      String status = "2 nodes, 1 pod left, 1 refused by PodDisruptionBudget web-pdb";
      assertEquals(status, ((ProgressLine.Live) progress).status());
      // The line is redrawn in the background: wait until the screen shows it.
      for (int i = 0; i < 100 && !screen.toString(StandardCharsets.UTF_8).contains(status); i++) {
        Thread.sleep(50);
      }
      assertTrue(screen.toString(StandardCharsets.UTF_8).contains("\r\033[K" + status));

      progress.out(terminal).println("pod/web-0 evicted");
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
    try (ProgressLine progress = ProgressLine.start(false, stream, 1)) {
      DrainProgressListener listener = progress.tracking(new DrainProgressListener() {});
      listener.planned(List.of(WEB_0), List.of(), List.of());
      progress.out(stream).println("evicting pod app/web-0");
    }
    assertEquals("evicting pod app/web-0\n", out.toString(StandardCharsets.UTF_8));
  }
}
