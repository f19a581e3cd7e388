package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.GuestNodeDrainer.GuestNodeMatch.NodeReadiness;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Whether the evacuation of a marked VMI may start draining its guest node now, so that an infra
 * node drain does not take a tenant's control plane (or too many of its workers) down at once:
 *
 * <ul>
 *   <li>control plane: at most one control-plane VMI of a tenant Cluster at a time; the next one
 *       only when no other is admitted and not yet gone, and every other control-plane guest node
 *       is Ready and no longer cordoned for an evacuation;
 *   <li>workers: at most the Cluster's limit admitted at once;
 *   <li>waiting VMIs go in a fixed order: earliest drain start, then name;
 *   <li>the deadline wins: a VMI still held at deadline minus the reserve goes ahead anyway, an
 *       {@link Override} that says what it risks.
 * </ul>
 *
 * Pure: the caller reads the Cluster's VMIs and guest nodes and records the admission.
 */
public final class TenantAdmission {
  private TenantAdmission() {}

  public enum Role {
    CONTROL_PLANE,
    WORKER;

    String phrase() {
      return this == CONTROL_PLANE ? "control-plane" : "worker";
    }
  }

  /**
   * Another VMI of the same tenant Cluster, as the infra cache shows it.
   *
   * @param marked KubeVirt asks for its evacuation (and it is not being deleted)
   * @param start its recorded drain start, if any yet
   * @param admitted its current evacuation was admitted and the VMI is not gone
   */
  public record Peer(
      String name, Role role, boolean marked, Optional<Instant> start, boolean admitted) {}

  /**
   * A control-plane guest node of the tenant other than this VMI's.
   *
   * @param cordonedForEvacuation still carries this controller's cordon mark: its VMI's evacuation
   *     has not finished (it is uncordoned once the recreated VMI runs and the node is Ready)
   */
  public record ControlPlaneNode(
      String name, NodeReadiness readiness, boolean cordonedForEvacuation) {}

  /**
   * @param start this VMI's recorded drain start
   * @param peers the Cluster's other VMIs
   * @param otherControlPlaneNodes read only for a control-plane VMI (empty otherwise)
   * @param limit the worker limit of this Cluster
   * @param deadline this VMI's deadline; the hold ends at {@code deadline - reserve}
   */
  public record Request(
      String name,
      Role role,
      Instant start,
      List<Peer> peers,
      List<ControlPlaneNode> otherControlPlaneNodes,
      EvacuationLimit limit,
      Instant now,
      Instant deadline,
      Duration reserve) {
    public Request {
      peers = List.copyOf(peers);
      otherControlPlaneNodes = List.copyOf(otherControlPlaneNodes);
    }
  }

  public sealed interface Decision permits Admit, Hold, Override {}

  /** Go ahead. */
  public record Admit() implements Decision {}

  /**
   * Wait.
   *
   * @param waitsFor what it waits for, a sentence part
   * @param goAheadAt when it goes ahead anyway (deadline minus reserve)
   */
  public record Hold(String waitsFor, Instant goAheadAt) implements Decision {}

  /**
   * Held until deadline minus reserve: go ahead anyway.
   *
   * @param risked what going ahead risks, a sentence part
   */
  public record Override(Role role, String risked) implements Decision {}

  private static final Comparator<Peer> ORDER =
      Comparator.comparing((Peer p) -> p.start().orElse(Instant.MAX)).thenComparing(Peer::name);

  public static Decision decide(Request r) {
    List<String> waits = r.role() == Role.CONTROL_PLANE ? controlPlaneWaits(r) : workerWaits(r);
    if (waits.isEmpty()) {
      return new Admit();
    }
    Instant goAheadAt = r.deadline().minus(r.reserve());
    String waitsFor = String.join("; ", waits);
    if (!r.now().isBefore(goAheadAt)) {
      return new Override(r.role(), waitsFor);
    }
    return new Hold(waitsFor, goAheadAt);
  }

  private static List<String> controlPlaneWaits(Request r) {
    List<String> waits = new ArrayList<>();
    List<String> underWay =
        r.peers().stream()
            .filter(p -> p.role() == Role.CONTROL_PLANE && p.admitted())
            .map(Peer::name)
            .sorted()
            .toList();
    if (!underWay.isEmpty()) {
      waits.add("control-plane VMI " + String.join(", ", underWay) + " still being evacuated");
    }
    for (ControlPlaneNode n : r.otherControlPlaneNodes()) {
      if (n.readiness() != NodeReadiness.READY) {
        waits.add("control-plane guest node " + n.name() + " not Ready");
      } else if (n.cordonedForEvacuation()) {
        waits.add("control-plane guest node " + n.name() + " not back from its evacuation yet");
      }
    }
    List<String> ahead = waitingAhead(r, Role.CONTROL_PLANE);
    if (!ahead.isEmpty()) {
      waits.add("control-plane VMI " + String.join(", ", ahead) + " first (marked earlier)");
    }
    return waits;
  }

  private static List<String> workerWaits(Request r) {
    if (r.limit().unlimited()) {
      return List.of();
    }
    int allowed = r.limit().resolve(r.peers().size() + 1);
    List<String> underWay =
        r.peers().stream()
            .filter(p -> p.role() == Role.WORKER && p.admitted())
            .map(Peer::name)
            .sorted()
            .toList();
    List<String> ahead = waitingAhead(r, Role.WORKER);
    if (underWay.size() + ahead.size() < allowed) {
      return List.of();
    }
    List<String> waits = new ArrayList<>();
    waits.add(
        underWay.size()
            + " worker VMI(s) of the Cluster being evacuated"
            + (underWay.isEmpty() ? "" : " (" + String.join(", ", underWay) + ")")
            + ", limit "
            + allowed
            + (r.limit().percent()
                ? " (" + r.limit() + " of " + (r.peers().size() + 1) + ")"
                : ""));
    if (!ahead.isEmpty()) {
      waits.add("worker VMI " + String.join(", ", ahead) + " first (marked earlier)");
    }
    return waits;
  }

  /** Marked VMIs of {@code role} not admitted yet that come before this one. */
  private static List<String> waitingAhead(Request r, Role role) {
    Peer self = new Peer(r.name(), r.role(), true, Optional.of(r.start()), false);
    return r.peers().stream()
        .filter(p -> p.role() == role && p.marked() && !p.admitted())
        .filter(p -> ORDER.compare(p, self) < 0)
        .sorted(ORDER)
        .map(Peer::name)
        .toList();
  }
}
