package dev.capk.vmieviction.runtime;

import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.informer.SharedInformerFactory;
import java.util.List;

/**
 * One controller as {@link ControllerRuntime} runs it: informers (started at once, also on a
 * standby) and workers built with the client's {@code ControllerBuilder} (run while leading).
 */
public interface ManagedController extends AutoCloseable {

  String name();

  /** The runtime starts and stops them. */
  default List<SharedInformerFactory> informerFactories() {
    return List.of();
  }

  boolean hasSynced();

  /** A {@code DefaultController}: the runtime waits for its reconciles. */
  Controller workers();

  /** Once, before the informers start: starts what else the controller owns. */
  default void start() {}

  /** The workers are about to stop: cancel work that must not outlive the lease. */
  default void stopping() {}

  /** After everything stopped: releases what the controller owns. */
  @Override
  default void close() {}

  /** For the queue depth gauge. */
  default int queueLength() {
    return 0;
  }
}
