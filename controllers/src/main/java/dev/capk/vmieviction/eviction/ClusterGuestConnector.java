package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesBook;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.GuestClusterRef;

/** Connects a VMI to its guest cluster through the cached guest clients. */
public final class ClusterGuestConnector implements GuestConnector {

  private final GuestClients clients;
  private final GuestNodeDrainer.Settings drainSettings;
  private final EventSeriesBook nodeEventSeries = new EventSeriesBook();

  public ClusterGuestConnector(GuestClients clients, GuestNodeDrainer.Settings drainSettings) {
    this.clients = clients;
    this.drainSettings = drainSettings;
  }

  @Override
  public Guest connect(VirtualMachineInstance vmi) throws GuestAccessException {
    GuestClusterRef ref =
        GuestClusterRef.of(vmi)
            .orElseThrow(
                () ->
                    new GuestAccessException(
                        GuestAccessException.Reason.MissingClusterLabel,
                        "VMI has no label " + dev.capk.vmieviction.api.CapkLabels.CLUSTER_NAME
                            + ": its guest cluster is unknown"));
    return new GuestNodeDrainer(clients.get(ref), drainSettings, nodeEventSeries);
  }
}
