package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.informer.ResourceEventHandler;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When this process first saw each VMI's evacuation mark ({@code status.evacuationNodeName}), by
 * VMI UID, as the informer delivered it: the drain start an evacuation records. A worker may reach
 * the VMI much later (its key held by a slow step of another kind, such as an uncordon check on a
 * slow guest, or every worker busy), and the deadline must still count from the mark, not from the
 * worker. Forgotten when the mark is cleared or the VMI goes; after a restart, the first list shows
 * the marks again. Thread-safe: the informer's thread records, workers read.
 */
public final class MarkSightings {

  private final Clock clock;
  private final Map<String, Instant> firstSeen = new ConcurrentHashMap<>();

  public MarkSightings(Clock clock) {
    this.clock = clock;
  }

  /** What the informer shows of a VMI now (added, updated or resynced). */
  void seen(VirtualMachineInstance vmi) {
    String uid = uid(vmi);
    if (uid == null) {
      return;
    }
    if (Eligibility.evacuationRequested(vmi)) {
      firstSeen.putIfAbsent(uid, clock.instant());
    } else {
      firstSeen.remove(uid);
    }
  }

  /** The VMI is gone (or no longer selected). */
  void gone(VirtualMachineInstance vmi) {
    String uid = uid(vmi);
    if (uid != null) {
      firstSeen.remove(uid);
    }
  }

  /** When the current mark of the VMI with this UID was first seen; empty if it was not. */
  Optional<Instant> firstSeen(String uid) {
    return uid == null ? Optional.empty() : Optional.ofNullable(firstSeen.get(uid));
  }

  /**
   * {@code next} (the handler that feeds the work queue), after recording what each event shows:
   * the sighting is recorded before the VMI can reach a worker.
   */
  public ResourceEventHandler<VirtualMachineInstance> before(
      ResourceEventHandler<VirtualMachineInstance> next) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(VirtualMachineInstance vmi) {
        seen(vmi);
        next.onAdd(vmi);
      }

      @Override
      public void onUpdate(VirtualMachineInstance old, VirtualMachineInstance vmi) {
        seen(vmi);
        next.onUpdate(old, vmi);
      }

      @Override
      public void onDelete(VirtualMachineInstance vmi, boolean finalStateUnknown) {
        gone(vmi);
        next.onDelete(vmi, finalStateUnknown);
      }
    };
  }

  private static String uid(VirtualMachineInstance vmi) {
    return vmi == null || vmi.getMetadata() == null ? null : vmi.getMetadata().getUid();
  }
}
