package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.workload.GuestAccessException;
import java.time.Duration;
import java.util.Optional;

/** Finds a VMI's guest cluster (Cluster, kubeconfig Secret) and gives access to it. */
public interface GuestConnector {
  /**
   * @param timeLeft the time left before the VMI's deadline: no guest request of the returned
   *     {@link Guest} runs past it; empty when no deadline runs (each request still has its own
   *     bound)
   */
  Guest connect(VirtualMachineInstance vmi, Optional<Duration> timeLeft)
      throws GuestAccessException;

  /** The evacuation of the VMI {@code vmiKey} ended: stop what its guest node's drain keeps. */
  default void evacuationEnded(String vmiKey) {}

  /**
   * True once after the watch on the VMI's guest node woke it because pods left: its next step may
   * finish the drain.
   */
  default boolean takeWake(String vmiKey) {
    return false;
  }
}
