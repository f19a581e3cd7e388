package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Appends the PID of every process the harness starts to {@code <workDir>/started-pids.txt}, so a
 * check after the suite (make test) can prove, by PID, that nothing the tests started is left
 * running.
 */
public final class PidLedger {
  private PidLedger() {}

  public static Path file() {
    return RepoPaths.workDir().resolve("started-pids.txt");
  }

  static synchronized void record(long pid, String component, String executable) {
    try {
      Files.createDirectories(file().getParent());
      Files.writeString(
          file(),
          pid + " " + component + " " + executable + "\n",
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot record PID " + pid + " in " + file() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Entries of the ledger whose process is still alive (same PID and same executable: PIDs are
   * reused).
   */
  public static List<String> stillAlive() throws IOException {
    List<String> alive = new ArrayList<>();
    if (!Files.exists(file())) {
      return alive;
    }
    for (String line : Files.readAllLines(file())) {
      String[] parts = line.split(" ", 3);
      if (parts.length == 3 && isRunning(Long.parseLong(parts[0]), parts[2])) {
        alive.add(line);
      }
    }
    return alive;
  }

  private static boolean isRunning(long pid, String executable) {
    return ProcessHandle.of(pid)
        .filter(ProcessHandle::isAlive)
        .flatMap(h -> h.info().command())
        .map(
            command ->
                command.equals(executable)
                    || command.endsWith("/" + Path.of(executable).getFileName()))
        .orElse(false);
  }
}
