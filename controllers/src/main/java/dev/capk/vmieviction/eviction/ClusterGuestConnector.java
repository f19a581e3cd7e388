package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.events.EventSeriesBook;
import dev.capk.vmieviction.events.EventWriters;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClient;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.TenantMapping;
import java.time.Duration;
import java.util.Optional;

/**
 * Connects a VMI to its guest cluster through the cached guest clients, reaching only the Cluster
 * the tenant mapping allows.
 */
public final class ClusterGuestConnector implements GuestConnector {

  private final GuestClients clients;
  private final TenantMapping namespaces;
  private final GuestNodeDrainer.Settings drainSettings;
  private final EventSeriesBook nodeEventSeries = new EventSeriesBook();
  private final EventWriters nodeEventWriters;
  private final NodeDrains drains;

  /**
   * @param nodeEventWriters write the guest nodes' Events off the steps' threads
   */
  public ClusterGuestConnector(
      GuestClients clients,
      TenantMapping namespaces,
      GuestNodeDrainer.Settings drainSettings,
      EventWriters nodeEventWriters,
      NodeDrains drains) {
    this.nodeEventWriters = nodeEventWriters;
    this.drains = drains;
    this.clients = clients;
    this.namespaces = namespaces;
    this.drainSettings = drainSettings;
  }

  @Override
  public Guest connect(VirtualMachineInstance vmi, Optional<Duration> timeLeft)
      throws GuestAccessException {
    GuestClient client = clients.get(namespaces.clusterOf(vmi));
    return new GuestNodeDrainer(
        timeLeft.map(client::until).orElse(client),
        drainSettings,
        nodeEventSeries,
        nodeEventWriters,
        drains);
  }

  @Override
  public void evacuationEnded(String vmiKey) {
    drains.end(vmiKey);
  }

  @Override
  public boolean takeWake(String vmiKey) {
    return drains.takeWake(vmiKey);
  }
}
