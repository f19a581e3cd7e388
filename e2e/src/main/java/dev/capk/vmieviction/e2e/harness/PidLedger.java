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
 * running. Each line is {@code PID COMPONENT START EXECUTABLE}, START being the process's start
 * time in clock ticks since boot ({@code /proc/PID/stat}, field 22): PIDs are reused, and on a busy
 * machine by another process of the same executable (another JVM); the start time tells them apart.
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
          pid + " " + component + " " + startTicks(pid) + " " + executable + "\n",
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
      String[] parts = line.split(" ", 4);
      if (parts.length == 4
          && isRunning(Long.parseLong(parts[0]), parts[3])
          && (parts[2].equals("-") || parts[2].equals(startTicks(Long.parseLong(parts[0]))))) {
        alive.add(line);
      }
    }
    return alive;
  }

  /** The process's start time in clock ticks since boot, or "-" where /proc cannot tell. */
  static String startTicks(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
      return fields[19];
    } catch (IOException | RuntimeException e) {
      return "-";
    }
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
