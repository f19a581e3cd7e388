package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * At most one maintenance per node. A maintenance is <em>accepted</em> once it carries our
 * finalizer (from then on it owns the node until it is deleted); a new one is accepted only if no
 * other maintenance of the node is accepted or older. Refused ones (Failed, no finalizer) are inert
 * and never take over: deleting the accepted maintenance ends maintenance, it does not start the
 * next one.
 */
public final class Admission {
  private Admission() {}

  /** Oldest first; same second: by name, so every reader agrees. */
  static final Comparator<NodeMaintenance> AGE =
      Comparator.comparing(
              (NodeMaintenance nm) -> nm.getMetadata().getCreationTimestamp(),
              Comparator.nullsLast(Comparator.naturalOrder()))
          .thenComparing(
              nm -> nm.getMetadata().getName(), Comparator.nullsLast(Comparator.naturalOrder()));

  public static boolean accepted(NodeMaintenance nm) {
    List<String> f = nm.getMetadata() == null ? null : nm.getMetadata().getFinalizers();
    return f != null && f.contains(NodeMaintenanceApi.FINALIZER);
  }

  /** Refused before, or being deleted before it was accepted: it will never act. */
  public static boolean inert(NodeMaintenance nm) {
    return !accepted(nm)
        && (NodeMaintenanceApi.PHASE_FAILED.equals(nm.phase())
            || nm.getMetadata().getDeletionTimestamp() != null);
  }

  /** What takes precedence over {@code candidate}: an accepted one, else an older undecided one. */
  public static Optional<NodeMaintenance> precedence(
      NodeMaintenance candidate, Collection<NodeMaintenance> all) {
    String node = candidate.nodeName();
    String uid = candidate.getMetadata().getUid();
    List<NodeMaintenance> rivals =
        all.stream()
            .filter(nm -> nm.getMetadata() != null && Objects.equals(node, nm.nodeName()))
            .filter(nm -> !Objects.equals(uid, nm.getMetadata().getUid()))
            .filter(nm -> !inert(nm))
            .sorted(AGE)
            .toList();
    return rivals.stream()
        .filter(Admission::accepted)
        .findFirst()
        .or(() -> rivals.stream().filter(nm -> AGE.compare(nm, candidate) < 0).findFirst());
  }
}
