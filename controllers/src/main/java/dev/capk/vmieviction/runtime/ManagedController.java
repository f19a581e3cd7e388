package dev.capk.vmieviction.runtime;

import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.informer.SharedInformerFactory;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * One controller as {@link ControllerRuntime} runs it: informers that fill its caches (started at
 * once, also on a standby replica) and workers built with the client's {@code ControllerBuilder}
 * (run only while this replica leads).
 */
public interface ManagedController extends AutoCloseable {

  String name();

  /** Every factory holding this controller's informers; the runtime starts and stops them. */
  List<SharedInformerFactory> informerFactories();

  /** All of this controller's informers have listed once. */
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

  /** A controller whose parts were built elsewhere and that owns nothing else. */
  static ManagedController of(
      String name,
      List<SharedInformerFactory> factories,
      BooleanSupplier synced,
      Controller workers) {
    return new Parts(name, factories, synced, workers);
  }

  /** See {@link #of}. */
  record Parts(
      String name,
      List<SharedInformerFactory> informerFactories,
      BooleanSupplier synced,
      Controller workers)
      implements ManagedController {
    @Override
    public boolean hasSynced() {
      return synced.getAsBoolean();
    }
  }
}
