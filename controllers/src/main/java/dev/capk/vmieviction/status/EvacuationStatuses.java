package dev.capk.vmieviction.status;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.EventReasons;
import dev.capk.vmieviction.kube.Metadata;
import dev.capk.vmieviction.workload.GuestAccessException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The evacuations in progress, derived from the VMIs and their Events alone (what the controller
 * writes on the infra cluster): pure, no I/O.
 *
 * <ul>
 *   <li>in progress: KubeVirt set {@code status.evacuationNodeName}, or the VMI is being deleted
 *       after a drain start was recorded;
 *   <li>phase: being deleted: {@link EvacuationPhase#WaitingForRecreate}; no drain start: {@link
 *       EvacuationPhase#Pending}; deadline passed: {@link EvacuationPhase#DeadlinePassed}; admitted
 *       (annotation {@code evacuation-admitted} equal to the drain start): {@link
 *       EvacuationPhase#Draining}; otherwise the latest of this evacuation's hold, pause and drain
 *       events says (at the same second the later step of a reconcile wins: pause, then hold, then
 *       drain); none yet: {@link EvacuationPhase#Draining};
 *   <li>events count for this evacuation when they are about this VMI UID and last occurred at or
 *       after its drain start.
 * </ul>
 */
public final class EvacuationStatuses {
  private EvacuationStatuses() {}

  /** Events that say a drain is under way, and what it waits for. */
  static final Set<String> DRAIN_REASONS =
      Stream.concat(
              Stream.of(
                  EventReasons.DRAIN_BLOCKED,
                  EventReasons.DRAIN_REFUSED,
                  EventReasons.CORDONED,
                  EventReasons.RECONCILE_ERROR,
                  EventReasons.INFRA_API_ERROR),
              Stream.of(GuestAccessException.Reason.values()).map(Enum::name))
          .collect(Collectors.toUnmodifiableSet());

  /** The events that name what a draining VMI waits for (a cordon is progress, not a blocker). */
  private static final Predicate<VmiEvent> DRAIN_BLOCKER =
      e -> DRAIN_REASONS.contains(e.reason()) && !EventReasons.CORDONED.equals(e.reason());

  /**
   * @param vmis the infra cluster's VMIs (any: those not being evacuated are left out)
   * @param events Events about VMIs (any: matched by UID)
   * @param drainTimeout the controller's {@code --drain-timeout}
   * @return the evacuations in progress, the most urgent (least time left) first
   */
  public static List<EvacuationStatus> of(
      List<VirtualMachineInstance> vmis,
      List<VmiEvent> events,
      Instant now,
      Duration drainTimeout) {
    Map<String, List<VmiEvent>> byUid =
        events.stream()
            .filter(e -> e.uid() != null && e.lastSeen() != null)
            .collect(Collectors.groupingBy(VmiEvent::uid));
    List<EvacuationStatus> out = new ArrayList<>();
    for (VirtualMachineInstance vmi : vmis) {
      if (inProgress(vmi)) {
        out.add(
            of(vmi, byUid.getOrDefault(vmi.getMetadata().getUid(), List.of()), now, drainTimeout));
      }
    }
    out.sort(
        Comparator.comparing(
                (EvacuationStatus s) -> s.timeLeft().orElse(Duration.ofSeconds(Long.MAX_VALUE)))
            .thenComparing(EvacuationStatus::namespace)
            .thenComparing(EvacuationStatus::name));
    return out;
  }

  static boolean inProgress(VirtualMachineInstance vmi) {
    if (vmi.getMetadata() == null) {
      return false;
    }
    boolean marked = !infraNode(vmi).isEmpty();
    boolean deletingAfterStart =
        vmi.getMetadata().getDeletionTimestamp() != null
            && Metadata.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME) != null;
    return marked || deletingAfterStart;
  }

  /** The status of one VMI being evacuated, from its own events. */
  static EvacuationStatus of(
      VirtualMachineInstance vmi, List<VmiEvent> ownEvents, Instant now, Duration drainTimeout) {
    String startRaw = Metadata.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME);
    Optional<Instant> start = EventFacts.rfc3339(startRaw);
    // Events carry whole seconds: one of this evacuation may read just before a sub-second start.
    List<VmiEvent> current =
        start
            .map(s -> s.truncatedTo(ChronoUnit.SECONDS))
            .map(
                s ->
                    ownEvents.stream()
                        .filter(e -> !e.lastSeen().isBefore(s))
                        .sorted(LATEST_LAST)
                        .toList())
            .orElse(List.of());
    Optional<DeadlineEstimate> deadline = start.map(s -> deadline(s, drainTimeout, vmi, current));
    Optional<Duration> left = deadline.map(d -> Duration.between(now, d.at()));
    EvacuationPhase phase;
    Optional<VmiEvent> blocker;
    if (vmi.getMetadata().getDeletionTimestamp() != null) {
      phase = EvacuationPhase.WaitingForRecreate;
      blocker = Optional.empty();
    } else if (start.isEmpty()) {
      phase = EvacuationPhase.Pending;
      blocker = Optional.empty();
    } else if (left.isPresent() && (left.get().isNegative() || left.get().isZero())) {
      phase = EvacuationPhase.DeadlinePassed;
      blocker =
          latest(current, e -> EventReasons.DEADLINE_PASSED.equals(e.reason()))
              .or(() -> latest(current, DRAIN_BLOCKER));
    } else {
      boolean admitted =
          startRaw.equals(Metadata.annotation(vmi, EvictionAnnotations.EVACUATION_ADMITTED));
      Optional<VmiEvent> step =
          admitted
              ? Optional.empty()
              : latest(
                  current,
                  e ->
                      EventReasons.EVACUATION_HELD.equals(e.reason())
                          || EventReasons.CLUSTER_PAUSED.equals(e.reason())
                          || DRAIN_REASONS.contains(e.reason()));
      String stepReason = step.map(VmiEvent::reason).orElse("");
      if (EventReasons.EVACUATION_HELD.equals(stepReason)) {
        phase = EvacuationPhase.Held;
        blocker = step;
      } else if (EventReasons.CLUSTER_PAUSED.equals(stepReason)) {
        phase = EvacuationPhase.Paused;
        blocker = step;
      } else {
        phase = EvacuationPhase.Draining;
        blocker = latest(current, DRAIN_BLOCKER);
      }
    }
    Optional<String> guestNode =
        current.stream()
            .map(EventFacts::guestNode)
            .flatMap(Optional::stream)
            .reduce((first, second) -> second);
    return new EvacuationStatus(
        vmi.getMetadata().getNamespace(),
        vmi.getMetadata().getName(),
        vmi.getMetadata().getUid(),
        orEmpty(Metadata.label(vmi, CapkLabels.CLUSTER_NAME)),
        orEmpty(Metadata.label(vmi, CapkLabels.ROLE)),
        guestNode,
        infraNode(vmi),
        phase,
        start,
        deadline,
        left,
        blocker);
  }

  /** The earliest of start + timeout, CAPK's grace time and a deadline Cluster API shortened. */
  static DeadlineEstimate deadline(
      Instant start, Duration timeout, VirtualMachineInstance vmi, List<VmiEvent> current) {
    DeadlineEstimate best =
        new DeadlineEstimate(start.plus(timeout), "--drain-timeout " + timeout(timeout));
    Optional<Instant> grace =
        EventFacts.rfc3339(Metadata.annotation(vmi, EvictionAnnotations.CAPK_DELETION_GRACE_TIME));
    if (grace.isPresent() && grace.get().isBefore(best.at())) {
      best =
          new DeadlineEstimate(
              grace.get(), "annotation " + EvictionAnnotations.CAPK_DELETION_GRACE_TIME);
    }
    for (VmiEvent e : current) {
      Optional<DeadlineEstimate> shortened = EventFacts.shortenedDeadline(e);
      if (shortened.isPresent() && shortened.get().at().isBefore(best.at())) {
        best = shortened.get();
      }
    }
    return best;
  }

  /** Go's duration syntax, as the flag takes it. */
  private static String timeout(Duration d) {
    return dev.capk.vmieviction.time.GoDuration.format(d);
  }

  /**
   * Oldest first; at the same second, in the order a reconcile writes them (pause, hold, drain).
   */
  private static final Comparator<VmiEvent> LATEST_LAST =
      Comparator.comparing(VmiEvent::lastSeen).thenComparingInt(EvacuationStatuses::stepOrder);

  private static int stepOrder(VmiEvent e) {
    if (EventReasons.CLUSTER_PAUSED.equals(e.reason())) {
      return 0;
    }
    if (EventReasons.EVACUATION_HELD.equals(e.reason())) {
      return 1;
    }
    return DRAIN_REASONS.contains(e.reason()) ? 2 : 3;
  }

  private static Optional<VmiEvent> latest(List<VmiEvent> sorted, Predicate<VmiEvent> which) {
    return sorted.stream().filter(which).reduce((first, second) -> second);
  }

  private static String infraNode(VirtualMachineInstance vmi) {
    String n = vmi.getStatus() == null ? null : vmi.getStatus().getEvacuationNodeName();
    return n == null ? "" : n;
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }
}
