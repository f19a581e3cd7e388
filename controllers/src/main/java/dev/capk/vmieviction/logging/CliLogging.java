package dev.capk.vmieviction.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.LoggerFactory;

/**
 * Sets the log level of a CLI process, kubectl-style ({@code -v}): the command's own output is the
 * report, so at the default verbosity no log line at all is written (kubectl writes none either);
 * {@code -v=1} and {@code -v=2} show INFO, {@code -v=3} and above DEBUG. The project's own loggers
 * are set as well as the root: {@code logback.xml} gives them a level of their own (the
 * controller's INFO), which a root level alone would not override. Acts only in a CLI process (see
 * {@link CliLogbackConfigurator#PROPERTY}); a command run embedded (a test's JVM, another program
 * calling {@code NodeCli.run}) leaves its host's logging alone.
 */
public final class CliLogging {
  /** The loggers {@code logback.xml} sets apart from the root. */
  private static final String[] CONFIGURED = {
    "dev.capk.vmieviction", "io.kubernetes.client", "io.kubernetes.client.extended.leaderelection"
  };

  private CliLogging() {}

  /** Sets the process's log levels for {@code -v}; does nothing when the command runs embedded. */
  public static void setVerbosity(int v) {
    if (!CliLogbackConfigurator.isCliProcess()
        || !(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    Level level = v <= 0 ? Level.OFF : v <= 2 ? Level.INFO : Level.DEBUG;
    context.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(level);
    for (String name : CONFIGURED) {
      context.getLogger(name).setLevel(level);
    }
  }
}
