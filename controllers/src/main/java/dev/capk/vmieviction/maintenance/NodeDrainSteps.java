package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainStep;
import io.kubernetes.client.openapi.ApiException;

/**
 * The drains of maintained nodes, one short step at a time: {@link MaintenanceDrains}, or a
 * scripted stand-in in tests. What a drain remembers between its steps (each pod's retry schedule,
 * the watch on the node's pods) is kept here, per maintenance.
 */
public interface NodeDrainSteps {

  /**
   * Sends the evictions that are due on the node of the maintenance {@code uid} and returns at
   * once; pods leaving the node wake the maintenance {@code name} again.
   *
   * @throws DrainRefusedException if some pod may not be deleted with these options
   * @throws ApiException if the node's pods could not be read, or eviction support discovered
   */
  DrainStep step(String uid, String name, String node, DrainOptions options)
      throws ApiException, DrainRefusedException;

  /** The maintenance's drain is over (done, node gone, deleted): stop watching, forget it. */
  void end(String uid);

  /** The maintenance {@code name} is gone from the cache: end whatever drain it had. */
  void endNamed(String name);
}
