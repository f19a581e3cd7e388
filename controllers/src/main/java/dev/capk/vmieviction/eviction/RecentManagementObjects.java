package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.workload.GuestAccessException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers, for a short while, what the Cluster API objects behind a VMI said: an evacuation step
 * comes every few seconds (or at once when pods leave its guest node), and reading its Cluster,
 * KubevirtMachine and Machine again at each step would triple its infra requests for facts that
 * change by hand (a Cluster paused, a Machine annotated). A change is seen within {@code freshFor}.
 * Only answers are remembered: a failed read is tried again at the next step.
 */
public final class RecentManagementObjects implements ManagementObjects {

  private record Remembered(String labels, MachineContract.Facts facts, Instant at) {}

  private final ManagementObjects source;
  private final Duration freshFor;
  private final Clock clock;
  private final Map<String, Remembered> byUid = new ConcurrentHashMap<>();

  public RecentManagementObjects(ManagementObjects source, Duration freshFor, Clock clock) {
    this.source = source;
    this.freshFor = freshFor;
    this.clock = clock;
  }

  @Override
  public MachineContract.Facts read(VirtualMachineInstance vmi) throws GuestAccessException {
    String uid = vmi.getMetadata().getUid();
    // The labels name the Cluster and the KubevirtMachine: other labels, other objects.
    String labels = String.valueOf(whatLeadsToTheObjects(vmi.getMetadata().getLabels()));
    Instant now = clock.instant();
    Remembered r = uid == null ? null : byUid.get(uid);
    if (r != null && r.labels.equals(labels) && now.isBefore(r.at.plus(freshFor))) {
      return r.facts;
    }
    MachineContract.Facts facts = source.read(vmi);
    if (uid != null) {
      byUid.put(uid, new Remembered(labels, facts, now));
      // Forget VMIs not asked about for a while (gone, or their evacuation over).
      byUid.values().removeIf(old -> now.isAfter(old.at.plus(freshFor.multipliedBy(10))));
    }
    return facts;
  }

  private static String whatLeadsToTheObjects(Map<String, String> labels) {
    if (labels == null) {
      return "";
    }
    return Objects.toString(labels.get(CapkLabels.CLUSTER_NAME))
        + "/"
        + Objects.toString(labels.get(CapkLabels.KUBEVIRT_MACHINE_NAME))
        + "/"
        + Objects.toString(labels.get(CapkLabels.KUBEVIRT_MACHINE_NAMESPACE));
  }
}
