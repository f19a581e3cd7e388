package dev.capk.vmieviction.drain.cli;

import java.lang.reflect.Method;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the log level of the CLI process, kubectl-style (-v): the command's own output is the
 * report, so the engine's log lines show only when asked for. Works on Logback (the runtime
 * binding) by reflection, since Logback is not a compile-time dependency; with another binding it
 * does nothing.
 */
public final class CliLogging {
  private CliLogging() {}

  public static void setVerbosity(int v) {
    String level = v <= 0 ? "WARN" : v <= 2 ? "INFO" : "DEBUG";
    try {
      Logger root = LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
      Class<?> levelClass =
          Class.forName("ch.qos.logback.classic.Level", true, root.getClass().getClassLoader());
      Object lvl = levelClass.getField(level).get(null);
      Method set = root.getClass().getMethod("setLevel", levelClass);
      set.invoke(root, lvl);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError notLogback) {
      // Another (or no) SLF4J binding: leave its configuration alone.
    }
  }
}
