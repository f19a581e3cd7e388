package dev.capk.vmieviction.status;

import static com.google.common.base.Strings.nullToEmpty;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.VmiEvents;
import dev.capk.vmieviction.kube.Metadata;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestAccessException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The evacuations in progress, from the VMIs and their Events (pure, no I/O): in progress when
 * KubeVirt set {@code status.evacuationNodeName}, or the VMI is being deleted after a drain start;
 * the phase the controller recorded on the VMI ({@link #phase}); what blocks it, the latest of this
 * evacuation's events (this VMI UID, at or after its drain start) that speak of its phase.
 */
public final class EvacuationStatuses {
  private EvacuationStatuses() {}

  /** An Event about the VMI of {@code uid}; {@code lastSeen}: when its series last occurred. */
  public record VmiEvent(String uid, String reason, String message, Instant lastSeen) {}

  /**
   * An evacuation's deadline: drain start plus {@code --drain-timeout}, moved earlier by CAPK's
   * {@code vmi-deletion-grace-time} annotation or a {@code DrainDeadlineShortened} event; {@code
   * source} says what set it.
   */
  public record DeadlineEstimate(Instant at, String source) {}

  /**
   * One evacuation in progress: {@code cluster} and {@code role} from the VMI's labels (or empty),
   * {@code guestNode} as the controller's events name it, {@code infraNode} the node drained.
   */
  public record EvacuationStatus(
      String namespace,
      String name,
      String uid,
      String cluster,
      String role,
      Optional<String> guestNode,
      String infraNode,
      EvacuationPhase phase,
      Optional<Instant> drainStart,
      Optional<DeadlineEstimate> deadline,
      Optional<Duration> timeLeft,
      Optional<VmiEvent> blockedBy) {}

  /** The events that name what a draining VMI waits for (a cordon is progress, not a blocker). */
  private static final Set<String> DRAIN_BLOCKERS =
      Stream.concat(
              Stream.of(
                  VmiEvents.DRAIN_BLOCKED,
                  VmiEvents.DRAIN_REFUSED,
                  VmiEvents.RECONCILE_ERROR,
                  VmiEvents.INFRA_API_ERROR),
              Stream.of(GuestAccessException.Reason.values()).map(Enum::name))
          .collect(Collectors.toUnmodifiableSet());

  private static final Predicate<VmiEvent> DRAIN_BLOCKER = e -> DRAIN_BLOCKERS.contains(e.reason());

  /** The evacuations among {@code vmis}, the least time left first; events matched by UID. */
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
    return vmi.getMetadata() != null
        && (!infraNode(vmi).isEmpty() // marked
            || vmi.getMetadata().getDeletionTimestamp() != null // deleted after a drain start
                && Metadata.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME) != null);
  }

  static EvacuationStatus of(
      VirtualMachineInstance vmi, List<VmiEvent> ownEvents, Instant now, Duration drainTimeout) {
    String startRaw = Metadata.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME);
    Optional<Instant> start = rfc3339(startRaw);
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
    EvacuationPhase phase = phase(vmi, start.isPresent(), left);
    Optional<VmiEvent> blocker =
        switch (phase) {
          case Pending, WaitingForRecreate -> Optional.empty();
          case Held -> latest(current, e -> VmiEvents.EVACUATION_HELD.equals(e.reason()));
          case Paused -> latest(current, e -> VmiEvents.CLUSTER_PAUSED.equals(e.reason()));
          case Migrating ->
              latest(
                  current,
                  e ->
                      VmiEvents.MIGRATION_STARTED.equals(e.reason())
                          || VmiEvents.MIGRATION_FAILED.equals(e.reason()));
          case Draining -> latest(current, DRAIN_BLOCKER);
          case DeadlinePassed ->
              latest(current, e -> VmiEvents.DEADLINE_PASSED.equals(e.reason()))
                  .or(() -> latest(current, DRAIN_BLOCKER));
        };
    Optional<String> guestNode =
        current.stream()
            .map(EvacuationStatuses::guestNode)
            .flatMap(Optional::stream)
            .reduce((first, second) -> second);
    return new EvacuationStatus(
        vmi.getMetadata().getNamespace(),
        vmi.getMetadata().getName(),
        vmi.getMetadata().getUid(),
        nullToEmpty(Metadata.label(vmi, CapkLabels.CLUSTER_NAME)),
        nullToEmpty(Metadata.label(vmi, CapkLabels.ROLE)),
        guestNode,
        infraNode(vmi),
        phase,
        start,
        deadline,
        left,
        blocker);
  }

  /**
   * The phase the controller recorded on the VMI, unless the VMI says more: being deleted, no drain
   * start yet, past its deadline. None recorded (an older controller): draining.
   */
  static EvacuationPhase phase(
      VirtualMachineInstance vmi, boolean started, Optional<Duration> left) {
    if (vmi.getMetadata().getDeletionTimestamp() != null) {
      return EvacuationPhase.WaitingForRecreate;
    }
    if (!started) {
      return EvacuationPhase.Pending;
    }
    if (left.isPresent() && (left.get().isNegative() || left.get().isZero())) {
      return EvacuationPhase.DeadlinePassed;
    }
    return EvacuationPhase.recorded(Metadata.annotation(vmi, EvictionAnnotations.EVACUATION_PHASE))
        .orElse(EvacuationPhase.Draining);
  }

  /** The earliest of start + timeout, CAPK's grace time and a deadline Cluster API shortened. */
  static DeadlineEstimate deadline(
      Instant start, Duration timeout, VirtualMachineInstance vmi, List<VmiEvent> current) {
    DeadlineEstimate best =
        new DeadlineEstimate(start.plus(timeout), "--drain-timeout " + GoDuration.format(timeout));
    Optional<Instant> grace =
        rfc3339(Metadata.annotation(vmi, EvictionAnnotations.CAPK_DELETION_GRACE_TIME));
    if (grace.isPresent() && grace.get().isBefore(best.at())) {
      best =
          new DeadlineEstimate(
              grace.get(), "annotation " + EvictionAnnotations.CAPK_DELETION_GRACE_TIME);
    }
    for (VmiEvent e : current) {
      Optional<DeadlineEstimate> shortened = shortenedDeadline(e);
      if (shortened.isPresent() && shortened.get().at().isBefore(best.at())) {
        best = shortened.get();
      }
    }
    return best;
  }

  /*
   * Facts only the controller's VMI event messages state (the guest node, a deadline Cluster API
   * moved earlier), in the controller's wording; StatusCommandIT reads them from a real controller.
   */

  /** Per reason, the message pattern whose first group is the guest node's name. */
  private static final Map<String, Pattern> GUEST_NODE =
      Map.of(
          VmiEvents.CORDONED, Pattern.compile("^Cordoned guest node (\\S+) in cluster "),
          VmiEvents.DRAIN_BLOCKED, Pattern.compile("^Guest node (\\S+) not drained yet"),
          VmiEvents.DRAIN_REFUSED, Pattern.compile("^Drain of guest node (\\S+) refused"),
          VmiEvents.DRAIN_SUCCEEDED, Pattern.compile("^Guest node (\\S+) drained"));

  private static final Pattern SHORTENED =
      Pattern.compile("^Deadline moved earlier to (\\S+) by (.+?) \\(shorter than");

  static Optional<String> guestNode(VmiEvent e) {
    Pattern p = GUEST_NODE.get(e.reason());
    Matcher m = p == null || e.message() == null ? null : p.matcher(e.message());
    return m != null && m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /** The deadline a {@code DrainDeadlineShortened} event announces, with what set it. */
  static Optional<DeadlineEstimate> shortenedDeadline(VmiEvent e) {
    if (!VmiEvents.DRAIN_DEADLINE_SHORTENED.equals(e.reason()) || e.message() == null) {
      return Optional.empty();
    }
    Matcher m = SHORTENED.matcher(e.message());
    return m.find()
        ? rfc3339(m.group(1)).map(at -> new DeadlineEstimate(at, m.group(2)))
        : Optional.empty();
  }

  /** An RFC 3339 time, or empty. */
  static Optional<Instant> rfc3339(String text) {
    try {
      return text == null || text.isBlank()
          ? Optional.empty()
          : Optional.of(OffsetDateTime.parse(text.trim()).toInstant());
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private static final Comparator<VmiEvent> LATEST_LAST = Comparator.comparing(VmiEvent::lastSeen);

  private static Optional<VmiEvent> latest(List<VmiEvent> sorted, Predicate<VmiEvent> which) {
    return sorted.stream().filter(which).reduce((first, second) -> second);
  }

  private static String infraNode(VirtualMachineInstance vmi) {
    return nullToEmpty(vmi.getStatus() == null ? null : vmi.getStatus().getEvacuationNodeName());
  }
}
