package dev.capk.vmieviction.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.status.NopStatusListener;

/**
 * Logback's configuration for a process of the drain CLI ({@code drain}, {@code cordon}, {@code
 * uncordon}): what {@code logback.xml} says, set in code. Parsing that XML (an XML parser, Joran's
 * model) costs a short-lived command a tenth of a second or more of its start-up, for log lines it
 * does not write at the default verbosity; the appender's encoder is likewise built at the first
 * line written. Found by logback through {@code META-INF/services}; acts only when the process's
 * {@code main} set {@link #PROPERTY} to {@code cli} and no {@code logback.configurationFile} is
 * given, else hands over to logback's own search (logback.xml), as for the controller.
 */
public final class CliLogbackConfigurator extends ContextAwareBase implements Configurator {
  /** The system property a CLI process's main sets (to {@code cli}) before any logger exists. */
  public static final String PROPERTY = "vmieviction.logging";

  /** logback.xml's pattern. */
  static final String PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %-5level [%thread] %logger{36} %msg%n";

  /** Whether this process is a CLI command's: its main set {@link #PROPERTY}. */
  public static boolean isCliProcess() {
    return "cli".equals(System.getProperty(PROPERTY));
  }

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (!isCliProcess() || System.getProperty("logback.configurationFile") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    NopStatusListener quiet = new NopStatusListener();
    context.getStatusManager().add(quiet);
    InformerStopInterrupts filter = new InformerStopInterrupts();
    filter.setContext(context);
    filter.start();
    context.addTurboFilter(filter);
    LazyStderr stderr = new LazyStderr();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.start();
    String level = System.getProperty("LOG_LEVEL", System.getenv("LOG_LEVEL"));
    context
        .getLogger("dev.capk.vmieviction")
        .setLevel(Level.toLevel(level == null || level.isEmpty() ? "INFO" : level, Level.INFO));
    context.getLogger("io.kubernetes.client").setLevel(Level.WARN);
    context.getLogger("io.kubernetes.client.extended.leaderelection").setLevel(Level.INFO);
    ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.WARN);
    root.addAppender(stderr);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** logback.xml's STDERR console appender, built when the first line is written. */
  static final class LazyStderr extends AppenderBase<ILoggingEvent> {
    private ConsoleAppender<ILoggingEvent> console;

    @Override
    protected void append(ILoggingEvent event) {
      // AppenderBase.doAppend is synchronized: one thread builds it.
      if (console == null) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(getContext());
        encoder.setPattern(PATTERN);
        encoder.start();
        ConsoleAppender<ILoggingEvent> c = new ConsoleAppender<>();
        c.setContext(getContext());
        c.setName("STDERR");
        c.setTarget("System.err");
        c.setEncoder(encoder);
        c.start();
        console = c;
      }
      console.doAppend(event);
    }

    @Override
    public void stop() {
      if (console != null) {
        console.stop();
      }
      super.stop();
    }
  }
}
