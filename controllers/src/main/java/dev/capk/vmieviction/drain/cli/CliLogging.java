package dev.capk.vmieviction.drain.cli;

import java.lang.reflect.Method;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the log level of a CLI process, kubectl-style ({@code -v}): the command's own output is the
 * report, so at the default verbosity no log line at all is written (kubectl writes none either);
 * {@code -v=1} and {@code -v=2} show INFO, {@code -v=3} and above DEBUG. The project's own loggers
 * are set as well as the root: {@code logback.xml} gives them a level of their own (the
 * controller's INFO), which a root level alone would not override. Works on Logback (the runtime
 * binding) by reflection, since Logback is not a compile-time dependency; with another binding it
 * does nothing.
 */
public final class CliLogging {
  /** The loggers {@code logback.xml} sets apart from the root. */
  private static final String[] CONFIGURED = {
    "dev.capk.vmieviction", "io.kubernetes.client", "io.kubernetes.client.extended.leaderelection"
  };

  /**
   * Set (to {@code cli}) by the jar's main for a CLI process, before any logger exists: the same
   * property {@code logging.CliLogbackConfigurator} reads. Without it the command runs embedded (a
   * test's JVM, another program calling {@code NodeCli.run}), whose logging is its own.
   */
  public static final String PROCESS_PROPERTY = "vmieviction.logging";

  private CliLogging() {}

  /** Sets the process's log levels for {@code -v}; does nothing when the command runs embedded. */
  public static void setVerbosity(int v) {
    if (!"cli".equals(System.getProperty(PROCESS_PROPERTY))) {
      return;
    }
    String level = v <= 0 ? "OFF" : v <= 2 ? "INFO" : "DEBUG";
    setLevel(Logger.ROOT_LOGGER_NAME, level);
    for (String name : CONFIGURED) {
      setLevel(name, level);
    }
  }

  private static void setLevel(String loggerName, String level) {
    try {
      Logger logger = LoggerFactory.getLogger(loggerName);
      Class<?> levelClass =
          Class.forName("ch.qos.logback.classic.Level", true, logger.getClass().getClassLoader());
      Object lvl = levelClass.getField(level).get(null);
      Method set = logger.getClass().getMethod("setLevel", levelClass);
      set.invoke(logger, lvl);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError notLogback) {
      // Another (or no) SLF4J binding: leave its configuration alone.
    }
  }
}
