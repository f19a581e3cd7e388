package dev.capk.vmieviction.runtime;

import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.informer.SharedInformerFactory;
import java.util.List;

/**
 * One controller as {@link ControllerRuntime} runs it: informers that fill its caches (started at
 * once, also on a standby replica) and workers built with the client's {@code ControllerBuilder}
 * (run only while this replica leads).
 */
public interface ManagedController extends AutoCloseable {

  String name();

  /** Every factory holding this controller's informers; the runtime starts and stops them. */
  default List<SharedInformerFactory> informerFactories() {
    return List.of();
  }

  boolean hasSynced();

  /** The workers (a {@code DefaultController}: the runtime waits for its reconciles), leading. */
  Controller workers();

  /** Once, before the informers start: starts what else the controller owns. */
  default void start() {}

  /** The workers are about to stop: cancel work that must not outlive the lease. */
  default void stopping() {}

  /** After everything stopped: releases what the controller owns. */
  @Override
  default void close() {}

  /** VMIs waiting in its work queue for a worker (the manager's queue depth gauge). */
  default int queueLength() {
    return 0;
  }
}
