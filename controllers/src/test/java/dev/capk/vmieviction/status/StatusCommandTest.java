package dev.capk.vmieviction.status;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StatusCommandTest {

  /** Runs {@code status ARGS}; its exit code and stderr, stdout having stayed empty. */
  private static String failure(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        StatusCommand.run(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            args);
    assertEquals("", out.toString(StandardCharsets.UTF_8));
    return code + " " + err.toString(StandardCharsets.UTF_8).strip();
  }

  @Test
  void badFlagValuesAreOneErrorLineAndExitOneBeforeAnyRequest() {
    assertEquals(
        "1 error: unable to match a printer suitable for the output format \"yaml\", allowed"
            + " formats are: json,wide",
        failure("status", "-o", "yaml"));
    assertEquals(
        "1 error: --drain-timeout must be positive", failure("status", "--drain-timeout", "0s"));
    assertEquals(
        "1 error: invalid --drain-timeout \"soon\": invalid duration \"soon\": not a duration"
            + " (e.g. 10m, 1h30m, 20s, 500ms)",
        failure("status", "--drain-timeout", "soon"));
  }
}
