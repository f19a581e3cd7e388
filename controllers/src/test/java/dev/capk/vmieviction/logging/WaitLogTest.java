package dev.capk.vmieviction.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

class WaitLogTest {

  @Test
  void aWaitIsToldAtInfoOncePerChangeOfWhatItWaitsForAndAtDebugOtherwise() {
    WaitLog waits = new WaitLog();
    List<Level> levels =
        List.of("3 pods", "3 pods", "3 pods", "2 pods", "2 pods", "3 pods").stream()
            .map(w -> waits.level("uid-1/drain", w))
            .toList();
    assertEquals(
        List.of(Level.INFO, Level.DEBUG, Level.DEBUG, Level.INFO, Level.DEBUG, Level.INFO), levels);
  }

  @Test
  void waitsUnderOtherKeysAreToldEachOnTheirOwn() {
    WaitLog waits = new WaitLog();
    assertEquals(Level.INFO, waits.level("uid-1/drain", "3 pods"));
    assertEquals(Level.INFO, waits.level("uid-2/drain", "3 pods"));
    assertEquals(Level.INFO, waits.level("uid-1/held", "3 pods"));
    assertEquals(Level.DEBUG, waits.level("uid-1/drain", "3 pods"));
  }

  @Test
  void aForgottenWaitIsToldAfreshEvenUnchanged() {
    WaitLog waits = new WaitLog();
    waits.level("uid-1/drain", "3 pods");
    waits.forget("uid-1/drain");
    assertEquals(Level.INFO, waits.level("uid-1/drain", "3 pods"));
  }
}
