package dev.capk.vmieviction.status;

import static com.google.common.base.Strings.nullToEmpty;
import static java.time.temporal.ChronoUnit.SECONDS;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.VmiEvents;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.openapi.models.CoreV1Event;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The evacuations in progress, from the VMIs and their Events (pure, no I/O): in progress when
 * KubeVirt set {@code status.evacuationNodeName}, or the VMI is being deleted after a drain start;
 * the phase the controller recorded on the VMI; what blocks it, the latest of this evacuation's
 * events (this VMI UID, at or after its drain start) that speak of its phase.
 */
public final class EvacuationStatuses {
  private EvacuationStatuses() {}

  /** An Event about the VMI of {@code uid}; {@code lastSeen}: when its series last occurred. */
  public record VmiEvent(String uid, String reason, String message, Instant lastSeen) {
    /** lastTimestamp (core/v1 series), else the series' or the event's time, else its first. */
    VmiEvent(CoreV1Event e) {
      this(
          e.getInvolvedObject().getUid(),
          e.getReason(),
          e.getMessage(),
          Stream.of(
                  e.getLastTimestamp(),
                  e.getSeries() == null ? null : e.getSeries().getLastObservedTime(),
                  e.getEventTime(),
                  e.getFirstTimestamp())
              .filter(Objects::nonNull)
              .findFirst()
              .map(OffsetDateTime::toInstant)
              .orElse(null));
    }
  }

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
    return vmis.stream()
        .filter(EvacuationStatuses::inProgress)
        .map(v -> of(v, byUid.getOrDefault(v.getMetadata().getUid(), List.of()), now, drainTimeout))
        .sorted(
            Comparator.comparing(
                    (EvacuationStatus s) -> s.timeLeft().orElse(Duration.ofSeconds(Long.MAX_VALUE)))
                .thenComparing(EvacuationStatus::namespace)
                .thenComparing(EvacuationStatus::name))
        .toList();
  }

  private static boolean inProgress(VirtualMachineInstance vmi) {
    return vmi.getMetadata() != null
        && (!infraNode(vmi).isEmpty() // marked
            || vmi.getMetadata().getDeletionTimestamp() != null // deleted after a drain start
                && LenientJson.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME) != null);
  }

  private static EvacuationStatus of(
      VirtualMachineInstance vmi, List<VmiEvent> ownEvents, Instant now, Duration drainTimeout) {
    Optional<Instant> start =
        rfc3339(LenientJson.annotation(vmi, EvictionAnnotations.DRAIN_START_TIME));
    // Events carry whole seconds: one of this evacuation may read just before a sub-second start.
    List<VmiEvent> current =
        ownEvents.stream()
            .filter(
                e -> start.isPresent() && !e.lastSeen().isBefore(start.get().truncatedTo(SECONDS)))
            .sorted(Comparator.comparing(VmiEvent::lastSeen))
            .toList();
    Optional<DeadlineEstimate> deadline = start.map(s -> deadline(s, drainTimeout, vmi, current));
    Optional<Duration> left = deadline.map(d -> Duration.between(now, d.at()));
    EvacuationPhase phase = phase(vmi, left);
    Optional<VmiEvent> blocker =
        switch (phase) {
          case Pending, WaitingForRecreate -> Optional.empty();
          case Held -> latest(current, Set.of(VmiEvents.EVACUATION_HELD));
          case Paused -> latest(current, Set.of(VmiEvents.CLUSTER_PAUSED));
          case Migrating ->
              latest(current, Set.of(VmiEvents.MIGRATION_STARTED, VmiEvents.MIGRATION_FAILED));
          case Draining -> latest(current, DRAIN_BLOCKERS);
          case DeadlinePassed ->
              latest(current, Set.of(VmiEvents.DEADLINE_PASSED))
                  .or(() -> latest(current, DRAIN_BLOCKERS));
        };
    return new EvacuationStatus(
        vmi.getMetadata().getNamespace(),
        vmi.getMetadata().getName(),
        vmi.getMetadata().getUid(),
        nullToEmpty(LenientJson.label(vmi, CapkLabels.CLUSTER_NAME)),
        nullToEmpty(LenientJson.label(vmi, CapkLabels.ROLE)),
        current.stream()
            .map(EvacuationStatuses::guestNode)
            .flatMap(Optional::stream)
            .reduce((a, b) -> b),
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
  private static EvacuationPhase phase(VirtualMachineInstance vmi, Optional<Duration> left) {
    if (vmi.getMetadata().getDeletionTimestamp() != null) {
      return EvacuationPhase.WaitingForRecreate;
    }
    if (left.isEmpty()) { // no drain start
      return EvacuationPhase.Pending;
    }
    if (!left.get().isPositive()) {
      return EvacuationPhase.DeadlinePassed;
    }
    return EvacuationPhase.recorded(
            LenientJson.annotation(vmi, EvictionAnnotations.EVACUATION_PHASE))
        .orElse(EvacuationPhase.Draining);
  }

  /** The earliest of start + timeout, CAPK's grace time and a deadline Cluster API shortened. */
  private static DeadlineEstimate deadline(
      Instant start, Duration timeout, VirtualMachineInstance vmi, List<VmiEvent> current) {
    String grace = EvictionAnnotations.CAPK_DELETION_GRACE_TIME;
    return Stream.of(
            Stream.of(
                new DeadlineEstimate(
                    start.plus(timeout), "--drain-timeout " + GoDuration.format(timeout))),
            rfc3339(LenientJson.annotation(vmi, grace))
                .map(at -> new DeadlineEstimate(at, "annotation " + grace))
                .stream(),
            current.stream().map(EvacuationStatuses::shortenedDeadline).flatMap(Optional::stream))
        .flatMap(s -> s)
        .min(Comparator.comparing(DeadlineEstimate::at)) // the first of equals
        .orElseThrow();
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

  private static final Map<String, Pattern> SHORTENED =
      Map.of(
          VmiEvents.DRAIN_DEADLINE_SHORTENED,
          Pattern.compile("^Deadline moved earlier to (\\S+) by (.+?) \\(shorter than"));

  private static Optional<String> guestNode(VmiEvent e) {
    return match(e, GUEST_NODE).map(m -> m.group(1));
  }

  /** The deadline a {@code DrainDeadlineShortened} event announces, with what set it. */
  private static Optional<DeadlineEstimate> shortenedDeadline(VmiEvent e) {
    return match(e, SHORTENED)
        .flatMap(m -> rfc3339(m.group(1)).map(at -> new DeadlineEstimate(at, m.group(2))));
  }

  /** The event's message matched by the pattern for its reason, if it matches. */
  private static Optional<Matcher> match(VmiEvent e, Map<String, Pattern> byReason) {
    Pattern p = byReason.get(e.reason());
    Matcher m = p == null || e.message() == null ? null : p.matcher(e.message());
    return m != null && m.find() ? Optional.of(m) : Optional.empty();
  }

  /** An RFC 3339 time, or empty. */
  private static Optional<Instant> rfc3339(String text) {
    try {
      return Optional.ofNullable(text)
          .filter(t -> !t.isBlank())
          .map(t -> OffsetDateTime.parse(t.trim()).toInstant());
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /** The latest of {@code sorted} with one of these reasons. */
  private static Optional<VmiEvent> latest(List<VmiEvent> sorted, Set<String> reasons) {
    return sorted.stream().filter(e -> reasons.contains(e.reason())).reduce((a, b) -> b);
  }

  private static String infraNode(VirtualMachineInstance vmi) {
    return nullToEmpty(vmi.getStatus() == null ? null : vmi.getStatus().getEvacuationNodeName());
  }
}
