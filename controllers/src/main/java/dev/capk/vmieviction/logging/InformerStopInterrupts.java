package dev.capk.vmieviction.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Drops the ERROR lines with a stack trace that the official client's informers write when they are
 * stopped: stopping an informer interrupts its threads, and the client logs each interrupt of its
 * process loop and of its listeners as an error ({@code DefaultController#processLoop get
 * interrupted}, {@code processor interrupted}). An interrupt reaches those threads only when the
 * informer is stopped (at shutdown, or when an infra cluster's pipeline is replaced), so this hides
 * nothing that went wrong; every other line of the client, and every line of ours, passes.
 * Registered by {@link LogbackConfigurator}.
 */
public final class InformerStopInterrupts extends TurboFilter {
  private static final String INFORMER_PACKAGE = "io.kubernetes.client.informer.cache.";

  @Override
  public FilterReply decide(
      Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (level != Level.ERROR
        || logger == null
        || !logger.getName().startsWith(INFORMER_PACKAGE)
        || !(t instanceof InterruptedException || interruptAmong(params))) {
      return FilterReply.NEUTRAL;
    }
    return FilterReply.DENY;
  }

  /** SLF4J passes a throwable logged with a message's arguments as the last of them. */
  private static boolean interruptAmong(Object[] params) {
    return params != null
        && params.length > 0
        && params[params.length - 1] instanceof InterruptedException;
  }
}
