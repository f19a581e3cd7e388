package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClient;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.GuestClusterRef;
import java.time.Duration;
import java.util.Optional;

/** Connects a VMI to its guest cluster through the cached guest clients. */
public final class ClusterGuestConnector implements GuestConnector {

  private final GuestClients clients;
  private final GuestNodeDrainer.Settings drainSettings;

  public ClusterGuestConnector(GuestClients clients, GuestNodeDrainer.Settings drainSettings) {
    this.clients = clients;
    this.drainSettings = drainSettings;
  }

  @Override
  public Guest connect(VirtualMachineInstance vmi, Optional<Duration> timeLeft) throws GuestAccessException {
    GuestClusterRef ref =
        GuestClusterRef.of(vmi)
            .orElseThrow(
                () ->
                    new GuestAccessException(
                        GuestAccessException.Reason.MissingClusterLabel,
                        "VMI has no label " + dev.capk.vmieviction.api.CapkLabels.CLUSTER_NAME
                            + ": its guest cluster is unknown"));
    GuestClient client = clients.get(ref);
    return new GuestNodeDrainer(timeLeft.map(client::until).orElse(client), drainSettings);
  }
}
