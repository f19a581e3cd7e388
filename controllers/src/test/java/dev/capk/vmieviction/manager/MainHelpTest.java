package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MainHelpTest {
  private final PrintStream stdout = System.out;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  @BeforeEach
  void capture() {
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restore() {
    System.setOut(stdout);
  }

  @Test
  void theTopLevelHelpNamesEveryCommandOfTheJar() {
    assertEquals(0, Main.run("--help"));
    String help = out.toString(StandardCharsets.UTF_8);
    for (String command : List.of("drain", "cordon", "uncordon", "status")) {
      assertTrue(help.contains("\n  " + command + " "), command + " in\n" + help);
    }
  }

  @Test
  void versionPrintsTheJarsVersionOrSaysItIsUnknown() {
    assertEquals(0, Main.run("--version"));
    String version = out.toString(StandardCharsets.UTF_8).strip();
    // Unit tests run from classes, not the jar: the manifest's version is absent here.
    assertTrue(version.startsWith("vmi-eviction-controller "), version);
    assertTrue(version.length() > "vmi-eviction-controller ".length(), version);
  }
}
