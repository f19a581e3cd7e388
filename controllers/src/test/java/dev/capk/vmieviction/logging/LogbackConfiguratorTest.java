package dev.capk.vmieviction.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class LogbackConfiguratorTest {
  private final Logger engine = LoggerFactory.getLogger("dev.capk.vmieviction.drain.NodeDrainer");
  private final Logger client = LoggerFactory.getLogger("io.kubernetes.client.informer.Cache");

  private final Map<ch.qos.logback.classic.Logger, Level> levels = new HashMap<>();

  @BeforeEach
  void keepTheConfiguredLevels() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.getLoggerList().forEach(l -> levels.put(l, l.getLevel()));
    System.setProperty(LogbackConfigurator.PROPERTY, "cli");
  }

  @AfterEach
  void restoreThem() {
    // For the tests that run after this one in the same JVM.
    System.clearProperty(LogbackConfigurator.PROPERTY);
    levels.forEach(ch.qos.logback.classic.Logger::setLevel);
  }

  @Test
  void anEmbeddedCommandLeavesItsHostsLoggingAlone() {
    System.clearProperty(LogbackConfigurator.PROPERTY);
    boolean before = engine.isInfoEnabled();

    LogbackConfigurator.setCliVerbosity(0);

    assertEquals(before, engine.isInfoEnabled(), "a test's JVM keeps its log levels");
  }

  @Test
  void
      atTheDefaultVerbosityTheEngineWritesNoLogLineEvenThoughTheConfigurationSetsItsLoggerToInfo() {
    LogbackConfigurator.setCliVerbosity(0);

    assertFalse(engine.isInfoEnabled(), "INFO");
    assertFalse(engine.isWarnEnabled(), "WARN");
    assertFalse(engine.isErrorEnabled(), "ERROR");
    assertFalse(client.isWarnEnabled(), "the client's WARN");
  }

  @Test
  void verbosityOneAndTwoShowInfoAndThreeShowsDebug() {
    LogbackConfigurator.setCliVerbosity(1);
    assertTrue(engine.isInfoEnabled());
    assertFalse(engine.isDebugEnabled());

    LogbackConfigurator.setCliVerbosity(2);
    assertTrue(client.isInfoEnabled());

    LogbackConfigurator.setCliVerbosity(3);
    assertTrue(engine.isDebugEnabled());
  }

  @Test
  void theControllerGetsItsLevelsAndOneStderrAppenderOnTheRoot() {
    System.clearProperty(LogbackConfigurator.PROPERTY);
    LoggerContext context = new LoggerContext();

    new LogbackConfigurator().configure(context);

    assertEquals(Level.INFO, context.getLogger("dev.capk.vmieviction").getLevel());
    assertEquals(Level.WARN, context.getLogger("io.kubernetes.client").getLevel());
    assertEquals(
        Level.INFO, context.getLogger("io.kubernetes.client.extended.leaderelection").getLevel());
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    assertEquals(Level.WARN, root.getLevel());
    assertTrue(root.getAppender("STDERR") != null, "the STDERR appender");
    assertEquals(1, context.getTurboFilterList().size(), "the informer-stop filter");
  }

  @Test
  void aCliProcessIsSilentUntilItsVerbosityIsParsed() {
    LoggerContext context = new LoggerContext();

    new LogbackConfigurator().configure(context);

    for (String name :
        new String[] {
          Logger.ROOT_LOGGER_NAME,
          "dev.capk.vmieviction",
          "io.kubernetes.client",
          "io.kubernetes.client.extended.leaderelection"
        }) {
      assertEquals(Level.OFF, context.getLogger(name).getLevel(), name);
    }
    assertTrue(
        context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDERR") != null,
        "-v then has somewhere to write");
  }
}
