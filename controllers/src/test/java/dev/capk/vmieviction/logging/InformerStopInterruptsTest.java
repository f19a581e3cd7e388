package dev.capk.vmieviction.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.spi.FilterReply;
import dev.capk.vmieviction.logging.LogbackConfigurator.InformerStopInterrupts;
import org.junit.jupiter.api.Test;

class InformerStopInterruptsTest {
  private final LoggerContext context = new LoggerContext();
  private final InformerStopInterrupts filter = new InformerStopInterrupts();
  private final Logger loop = context.getLogger("io.kubernetes.client.informer.cache.Controller");
  private final Logger ours = context.getLogger("dev.capk.vmieviction.manager.Manager");

  private FilterReply decide(Logger logger, Level level, Object[] params, Throwable t) {
    return filter.decide(null, logger, level, "m {}", params, t);
  }

  @Test
  void theInformersInterruptErrorsAreDroppedHoweverTheExceptionIsPassed() {
    InterruptedException stop = new InterruptedException();
    // log.error("DefaultController#processLoop get interrupted {}", t.getMessage(), t)
    assertEquals(FilterReply.DENY, decide(loop, Level.ERROR, new Object[] {null, stop}, null));
    // log.error("processor interrupted: {}", e)
    assertEquals(FilterReply.DENY, decide(loop, Level.ERROR, new Object[] {stop}, null));
    assertEquals(FilterReply.DENY, decide(loop, Level.ERROR, null, stop));
  }

  @Test
  void everyOtherLineIsLeftAlone() {
    InterruptedException stop = new InterruptedException();
    RuntimeException crash = new IllegalStateException("handler threw");
    assertEquals(
        FilterReply.NEUTRAL, decide(loop, Level.ERROR, new Object[] {"x", crash}, null), "crash");
    assertEquals(FilterReply.NEUTRAL, decide(loop, Level.WARN, null, stop), "not an ERROR");
    assertEquals(FilterReply.NEUTRAL, decide(ours, Level.ERROR, null, stop), "our own logger");
  }
}
