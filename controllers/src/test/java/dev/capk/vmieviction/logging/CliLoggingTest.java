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

class CliLoggingTest {
  private final Logger engine = LoggerFactory.getLogger("dev.capk.vmieviction.drain.NodeDrainer");
  private final Logger client = LoggerFactory.getLogger("io.kubernetes.client.informer.Cache");

  private final Map<ch.qos.logback.classic.Logger, Level> levels = new HashMap<>();

  @BeforeEach
  void keepLogbackXmlsLevels() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.getLoggerList().forEach(l -> levels.put(l, l.getLevel()));
    System.setProperty(CliLogbackConfigurator.PROPERTY, "cli");
  }

  @AfterEach
  void restoreThem() {
    // For the tests that run after this one in the same JVM.
    System.clearProperty(CliLogbackConfigurator.PROPERTY);
    levels.forEach(ch.qos.logback.classic.Logger::setLevel);
  }

  @Test
  void anEmbeddedCommandLeavesItsHostsLoggingAlone() {
    System.clearProperty(CliLogbackConfigurator.PROPERTY);
    boolean before = engine.isInfoEnabled();

    CliLogging.setVerbosity(0);

    assertEquals(before, engine.isInfoEnabled(), "a test's JVM keeps its log levels");
  }

  @Test
  void atTheDefaultVerbosityTheEngineWritesNoLogLineEvenThoughLogbackXmlSetsItsLoggerToInfo() {
    CliLogging.setVerbosity(0);

    assertFalse(engine.isInfoEnabled(), "INFO");
    assertFalse(engine.isWarnEnabled(), "WARN");
    assertFalse(engine.isErrorEnabled(), "ERROR");
    assertFalse(client.isWarnEnabled(), "the client's WARN");
  }

  @Test
  void verbosityOneAndTwoShowInfoAndThreeShowsDebug() {
    CliLogging.setVerbosity(1);
    assertTrue(engine.isInfoEnabled());
    assertFalse(engine.isDebugEnabled());

    CliLogging.setVerbosity(2);
    assertTrue(client.isInfoEnabled());

    CliLogging.setVerbosity(3);
    assertTrue(engine.isDebugEnabled());
  }
}
