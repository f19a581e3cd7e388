package dev.capk.vmieviction.manager;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * When an informer's list is refused (HTTP 403: the controller's RBAC lacks list on the kind), the
 * next list waits for a pause instead of the informer's one second: a deployment without the verb
 * must not send a refused list every second for ever. Granting the verb later is seen within the
 * pause.
 */
final class RefusedListPause {

  private final long pauseNanos;
  private final LongSupplier nanoTime;
  private volatile Long refusedAt;

  RefusedListPause(Duration pause, LongSupplier nanoTime) {
    this.pauseNanos = pause.toNanos();
    this.nanoTime = nanoTime;
  }

  /** No list was refused, or the last refusal is at least a pause old. */
  boolean mayList() {
    Long at = refusedAt;
    return at == null || nanoTime.getAsLong() - at >= pauseNanos;
  }

  void refused() {
    refusedAt = nanoTime.getAsLong();
  }

  void listed() {
    refusedAt = null;
  }
}
