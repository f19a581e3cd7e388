package dev.capk.vmieviction.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.spi.FilterReply;
import ch.qos.logback.core.status.NopStatusListener;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * How every process of the jar logs (found through {@code META-INF/services}): one line per
 * happening to stderr; ours at {@code LOG_LEVEL} (default INFO), leader election's at INFO, the
 * rest at WARN. In code: parsing a {@code logback.xml} costs a CLI command a tenth of a second.
 * Hands over to logback's own search for {@code logback.configurationFile} or a {@code
 * logback-test.xml} (tests).
 */
public final class LogbackConfigurator extends ContextAwareBase implements Configurator {
  /** A CLI process's main sets it (to {@code cli}) before any logger exists. */
  public static final String PROPERTY = "vmieviction.logging";

  static final String PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %-5level [%thread] %logger{36} %msg%n";

  private static final String OURS = "dev.capk.vmieviction";
  private static final String CLIENT = "io.kubernetes.client";
  private static final String LEADER_ELECTION = "io.kubernetes.client.extended.leaderelection";

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (System.getProperty("logback.configurationFile") != null
        || getClass().getClassLoader().getResource("logback-test.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    context.getStatusManager().add(new NopStatusListener());
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
        .getLogger(OURS)
        .setLevel(Level.toLevel(level == null || level.isEmpty() ? "INFO" : level, Level.INFO));
    // The client logs each watch restart and event-sink detail at INFO: noise for operators.
    context.getLogger(CLIENT).setLevel(Level.WARN);
    context.getLogger(LEADER_ELECTION).setLevel(Level.INFO);
    Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.WARN);
    root.addAppender(stderr);
    if ("cli".equals(System.getProperty(PROPERTY))) {
      // A CLI command is silent until its -v is parsed (setCliVerbosity): its warm-up thread runs
      // client code before then.
      cliLevel(context, Level.OFF);
    }
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /**
   * kubectl's {@code -v}: 0 none (the output is the report), 1 and 2 INFO, 3 and above DEBUG. Does
   * nothing when the command runs embedded (a test's JVM): its host's logging is left alone.
   */
  public static void setCliVerbosity(int v) {
    if (!"cli".equals(System.getProperty(PROPERTY))
        || !(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    cliLevel(context, v <= 0 ? Level.OFF : v <= 2 ? Level.INFO : Level.DEBUG);
  }

  private static void cliLevel(LoggerContext context, Level level) {
    for (String name :
        new String[] {org.slf4j.Logger.ROOT_LOGGER_NAME, OURS, CLIENT, LEADER_ELECTION}) {
      context.getLogger(name).setLevel(level);
    }
  }

  /**
   * Drops the ERROR lines with a stack trace the client's informers write for an interrupt of their
   * threads, which comes only when they are stopped.
   */
  static final class InformerStopInterrupts extends TurboFilter {
    @Override
    public FilterReply decide(
        Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
      // SLF4J passes a throwable logged with a message's arguments as the last of them.
      boolean interrupt =
          t instanceof InterruptedException
              || (params != null
                  && params.length > 0
                  && params[params.length - 1] instanceof InterruptedException);
      return level == Level.ERROR
              && logger != null
              && logger.getName().startsWith("io.kubernetes.client.informer.cache.")
              && interrupt
          ? FilterReply.DENY
          : FilterReply.NEUTRAL;
    }
  }

  /** A console appender on stderr, built when the first line is written (start-up cost). */
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
