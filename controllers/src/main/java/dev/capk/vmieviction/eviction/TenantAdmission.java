package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import com.google.common.util.concurrent.Striped;
import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.Evacuator.StepOutcome;
import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.Guest.GuestNodeMatch.NodeReadiness;
import dev.capk.vmieviction.eviction.Guest.MarkedNodes;
import dev.capk.vmieviction.eviction.VmiEvents.Told;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The admit step: whether a marked VMI's guest node may be drained now, so that an infra node drain
 * does not take a tenant's control plane (or too many of its workers) down at once:
 *
 * <ul>
 *   <li>control plane: at most one control-plane VMI of a tenant Cluster at a time; the next one
 *       only when no other is admitted and not yet gone, and every other control-plane guest node
 *       is Ready and no longer cordoned for an evacuation;
 *   <li>workers: at most the Cluster's limit admitted at once;
 *   <li>waiting VMIs go in a fixed order: earliest drain start, then name;
 *   <li>the deadline wins: a VMI still held at deadline minus the reserve goes ahead anyway, an
 *       override that says what it risks.
 * </ul>
 *
 * <p>A worker with no limit in force costs no guest call and no write. An admission is recorded on
 * the VMI ({@code capk.cluster.x-k8s.io/evacuation-admitted}) so a restarted controller counts it.
 */
public final class TenantAdmission {

  private static final Logger log = LoggerFactory.getLogger(TenantAdmission.class);

  /**
   * VMIs of one Cluster are decided one at a time in this process, else two workers could each see
   * the last free slot.
   */
  private final Striped<Lock> clusterLocks = Striped.lock(64);

  /**
   * Admissions this process recorded (the drain start admitted), by VMI UID, until the informer
   * cache shows them: a decision right after another one must count it.
   */
  private final Cache<String, String> admittedHere =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterWrite(1, TimeUnit.HOURS).build();

  /** VMI roles learnt from their guest nodes, by UID (a role does not change). */
  private final Cache<String, Role> learntRoles =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterAccess(1, TimeUnit.HOURS).build();

  private final StepContext c;

  TenantAdmission(StepContext c) {
    this.c = c;
  }

  /**
   * @param limit the Cluster's limit in force, as the Cluster API read found it
   * @throws GuestAccessException when the guest's nodes could not be listed: retry
   * @throws ApiException when the admission could not be recorded: retry
   */
  StepOutcome check(
      String key,
      VirtualMachineInstance vmi,
      Instant start,
      Deadline deadline,
      EvacuationLimit limit)
      throws GuestAccessException, ApiException {
    String startText = DrainStartTime.format(start);
    String uid = vmi.getMetadata().getUid();
    String name = vmi.getMetadata().getName();
    String clusterName = LenientJson.label(vmi, CapkLabels.CLUSTER_NAME);
    if (clusterName == null) {
      return new StepOutcome.Proceed(vmi); // no tenant known: the guest connection says so
    }
    String cluster = vmi.getMetadata().getNamespace() + "/" + clusterName;
    if (startText.equals(LenientJson.annotation(vmi, EvictionAnnotations.EVACUATION_ADMITTED))
        || startText.equals(admittedHere.getIfPresent(uid))) {
      c.admission(key, cluster, true); // also after a restart: its end wakes the held ones
      return new StepOutcome.Proceed(vmi); // once admitted, always admitted
    }
    MarkedNodes nodes = null;
    Role role = knownRole(vmi).orElse(null);
    // A worker under a limit counts its peers by role: one of unknown role is told by its node.
    boolean peersUnknown =
        !limit.unlimited()
            && c.vmis.ofCluster(vmi.getMetadata().getNamespace(), clusterName).stream()
                .anyMatch(p -> !name.equals(p.getMetadata().getName()) && knownRole(p).isEmpty());
    if (role != Role.WORKER || peersUnknown) {
      // The role from the VMI's own guest node (its watch, which the cordon reads next), and for
      // a control-plane VMI (or peers of unknown role) one bounded list of the guest's nodes:
      // roles and readiness at once. Outside the lock and through the tenant's throttle, as every
      // guest request: a stalled tenant API server must hold no more workers than its share.
      Guest guest = c.guests.connect(vmi, Optional.of(deadline.remaining()));
      Optional<Duration> wait = guest.tryEnterStep(false);
      if (wait.isPresent()) {
        return held("a free slot for requests to the guest cluster", wait.get());
      }
      try {
        if (role == null) {
          role = roleFromNodes(name, MarkedNodes.of(guest.findNode(name, true).stream().toList()));
        }
        nodes = role == Role.CONTROL_PLANE || peersUnknown ? guest.markedNodes() : null;
      } finally {
        guest.leaveStep();
      }
    }
    learntRoles.put(uid, role);
    if (role == Role.WORKER && limit.unlimited()) {
      c.admission(key, cluster, true);
      return new StepOutcome.Proceed(vmi);
    }
    MarkedNodes read = nodes;
    Lock lock = clusterLocks.get(cluster);
    lock.lock();
    try {
      // The Cluster's other VMIs, from an index of the infra informer cache.
      List<Peer> peers =
          c.vmis.ofCluster(vmi.getMetadata().getNamespace(), clusterName).stream()
              .filter(p -> !name.equals(p.getMetadata().getName()))
              .map(p -> peer(p, read))
              .toList();
      return admit(
          key,
          vmi,
          cluster,
          new Request(
              name,
              role,
              start,
              peers,
              read == null ? List.of() : read.nodes(),
              limit,
              c.clock.instant(),
              deadline.at(),
              c.settings.drainReserve()));
    } finally {
      lock.unlock();
    }
  }

  /** Under the Cluster's lock. */
  private StepOutcome admit(String key, VirtualMachineInstance vmi, String cluster, Request r)
      throws ApiException {
    Decision d = decide(r);
    String role = r.role().phrase();
    String deadline = DrainStartTime.format(r.deadline());
    if (!d.admit() && !d.override()) {
      // Looked at again at every retry: told at INFO once per change of what it waits for.
      String wait = vmi.getMetadata().getUid() + "/" + DrainStartTime.format(r.start()) + "/held";
      Level level = c.level(wait, d.waitsFor());
      String goAhead = DrainStartTime.format(d.goAheadAt());
      Told.HELD.to(c.events, level, vmi, key, cluster, role, d.waitsFor(), goAhead, deadline);
      // Woken at once when what it waits for ends (StepContext#waitFor), else it looks again after
      // the retry interval, and at deadline minus reserve at the latest.
      c.admission(key, cluster, false);
      Duration untilEnd = Duration.between(r.now(), d.goAheadAt());
      Duration retry = c.settings.retryInterval();
      return held(d.waitsFor(), untilEnd.compareTo(retry) < 0 ? untilEnd : retry);
    }
    if (d.override()) {
      Told told = r.role() == Role.CONTROL_PLANE ? Told.QUORUM_OVERRIDDEN : Told.LIMIT_OVERRIDDEN;
      String reserve = GoDuration.format(r.reserve());
      told.to(c.events, vmi, key, cluster, role, d.waitsFor(), deadline, reserve);
    } else {
      log.info("evacuation admitted vmi={} cluster={} role={}", key, cluster, role);
    }
    // Admitted after a hold: the phase is the drain's again, in the same patch.
    String startText = DrainStartTime.format(r.start());
    VirtualMachineInstance updated =
        c.vmis.annotate(
            vmi,
            Map.of(
                EvictionAnnotations.EVACUATION_ADMITTED,
                startText,
                EvictionAnnotations.EVACUATION_PHASE,
                EvacuationPhase.Draining.name()));
    admittedHere.put(vmi.getMetadata().getUid(), startText);
    c.admission(key, cluster, true);
    return new StepOutcome.Proceed(updated);
  }

  private static StepOutcome held(String waitsFor, Duration retry) {
    return new StepOutcome.Wait(EvacuationPhase.Held, "held: " + waitsFor, retry);
  }

  /** From the VMI's role label, else as learnt from its guest node before. */
  private Optional<Role> knownRole(VirtualMachineInstance vmi) {
    String label = LenientJson.label(vmi, CapkLabels.ROLE);
    if (label != null) {
      return Optional.of(
          CapkLabels.ROLE_CONTROL_PLANE.equals(label) ? Role.CONTROL_PLANE : Role.WORKER);
    }
    return Optional.ofNullable(learntRoles.getIfPresent(vmi.getMetadata().getUid()));
  }

  private static Role roleFromNodes(String vmiName, MarkedNodes nodes) {
    return nodes != null
            && nodes.nodes().stream().anyMatch(n -> n.runsIn(vmiName) && n.controlPlane())
        ? Role.CONTROL_PLANE
        : Role.WORKER;
  }

  private Peer peer(VirtualMachineInstance p, MarkedNodes nodes) {
    String name = p.getMetadata().getName();
    boolean marked =
        p.getMetadata().getDeletionTimestamp() == null && Eligibility.evacuationRequested(p);
    String start = LenientJson.annotation(p, EvictionAnnotations.DRAIN_START_TIME);
    String admittedByUs = admittedHere.getIfPresent(p.getMetadata().getUid());
    boolean admitted =
        (start != null
                && start.equals(LenientJson.annotation(p, EvictionAnnotations.EVACUATION_ADMITTED)))
            // Our own admission the cache does not show yet; a called-off one no longer counts.
            || (marked && admittedByUs != null && (start == null || start.equals(admittedByUs)));
    return new Peer(
        name,
        knownRole(p).orElseGet(() -> roleFromNodes(name, nodes)),
        marked,
        Optional.ofNullable(start).flatMap(DrainStartTime::parseRfc3339),
        admitted);
  }

  public enum Role {
    CONTROL_PLANE,
    WORKER;

    String phrase() {
      return this == CONTROL_PLANE ? "control-plane" : "worker";
    }
  }

  /**
   * Another VMI of the same tenant Cluster, as the infra cache shows it; {@code marked}: KubeVirt
   * asks for its evacuation and it is not being deleted.
   */
  public record Peer(
      String name, Role role, boolean marked, Optional<Instant> start, boolean admitted) {}

  /**
   * @param guestNodes the guest's nodes, read for a control-plane VMI (or one of unknown role); one
   *     still marked by our cordon is not back from its evacuation (uncordoned once the recreated
   *     VMI runs and the node is Ready)
   * @param deadline this VMI's deadline; the hold ends at {@code deadline - reserve}
   */
  public record Request(
      String name,
      Role role,
      Instant start,
      List<Peer> peers,
      List<MarkedNodes.Node> guestNodes,
      EvacuationLimit limit,
      Instant now,
      Instant deadline,
      Duration reserve) {}

  /**
   * Admit when {@code waitsFor} (a sentence part) is empty; else hold until {@code goAheadAt}
   * (deadline minus reserve), and from then on go ahead anyway ({@code override}) at that risk.
   */
  public record Decision(String waitsFor, Instant goAheadAt, boolean override) {
    public boolean admit() {
      return waitsFor.isEmpty();
    }
  }

  private static final Comparator<Peer> ORDER =
      Comparator.comparing((Peer p) -> p.start().orElse(Instant.MAX)).thenComparing(Peer::name);

  /**
   * A control-plane VMI counts as a worker under a limit of one, and also waits for the other
   * control-plane guest nodes to be Ready and back from their evacuations.
   */
  public static Decision decide(Request r) {
    boolean cp = r.role() == Role.CONTROL_PLANE;
    int allowed = cp ? 1 : r.limit().resolve(r.peers().size() + 1);
    // Admitted VMIs of the role, and the marked ones not admitted yet that come before this one.
    Peer self = new Peer(r.name(), r.role(), true, Optional.of(r.start()), false);
    List<String> underWay =
        r.peers().stream()
            .filter(p -> p.role() == r.role() && p.admitted())
            .map(Peer::name)
            .sorted()
            .toList();
    List<String> ahead =
        r.peers().stream()
            .filter(p -> p.role() == r.role() && p.marked() && !p.admitted())
            .filter(p -> ORDER.compare(p, self) < 0)
            .sorted(ORDER)
            .map(Peer::name)
            .toList();
    boolean full = underWay.size() + ahead.size() >= allowed;
    List<String> waits = new ArrayList<>();
    if (full && cp && !underWay.isEmpty()) {
      waits.add("control-plane VMI " + String.join(", ", underWay) + " still being evacuated");
    } else if (full && !cp) {
      waits.add(
          underWay.size()
              + " worker VMI(s) of the Cluster being evacuated"
              + (underWay.isEmpty() ? "" : " (" + String.join(", ", underWay) + ")")
              + ", limit "
              + allowed
              + (r.limit().percent()
                  ? " (" + r.limit() + " of " + (r.peers().size() + 1) + ")"
                  : ""));
    }
    // The other control-plane guest nodes: by their role label, or running a control-plane peer.
    for (MarkedNodes.Node n : r.guestNodes()) {
      boolean other =
          cp
              && !n.runsIn(r.name())
              && (n.controlPlane()
                  || r.peers().stream()
                      .anyMatch(p -> p.role() == Role.CONTROL_PLANE && n.runsIn(p.name())));
      if (other && n.readiness() != NodeReadiness.READY) {
        waits.add("control-plane guest node " + n.name() + " not Ready");
      } else if (other && n.marked()) {
        waits.add("control-plane guest node " + n.name() + " not back from its evacuation yet");
      }
    }
    if (full && !ahead.isEmpty()) {
      waits.add(r.role().phrase() + " VMI " + String.join(", ", ahead) + " first (marked earlier)");
    }
    Instant goAheadAt = r.deadline().minus(r.reserve());
    boolean override = !waits.isEmpty() && !r.now().isBefore(goAheadAt);
    return new Decision(String.join("; ", waits), goAheadAt, override);
  }
}
