package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reads the end of a process log, for error messages that explain a failed start. */
public final class ProcessLogs {
  private ProcessLogs() {}

  public static String tail(Path log, int lines) {
    try {
      // Decoding bytes (not readAllLines) tolerates a log cut mid-character.
      List<String> all =
          new String(Files.readAllBytes(log), StandardCharsets.UTF_8).lines().toList();
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e.getMessage() + ")";
    }
  }

  public static boolean contains(Path log, String text) {
    return contains(log, 0, text);
  }

  /**
   * Whether the log from byte {@code from} on (what a process appended since) holds {@code text}.
   */
  public static boolean contains(Path log, long from, String text) {
    try {
      byte[] all = Files.readAllBytes(log);
      int start = (int) Math.min(from, all.length);
      return new String(all, start, all.length - start, StandardCharsets.UTF_8).contains(text);
    } catch (IOException e) {
      return false;
    }
  }
}
