package dev.capk.vmieviction.status;

import dev.capk.vmieviction.eviction.EventReasons;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Facts the controller's VMI events state in their messages and nowhere else on the infra cluster:
 * the guest node it cordoned or drains (the node lives in the guest cluster) and a deadline Cluster
 * API moved earlier. The wording is the controller's ({@code Evacuator}, {@code
 * MachineContractCheck}); StatusCommandIT reads it back from a real controller.
 */
final class EventFacts {
  private EventFacts() {}

  /** Per reason, the message pattern whose first group is the guest node's name. */
  private static final Map<String, Pattern> GUEST_NODE =
      Map.of(
          EventReasons.CORDONED, Pattern.compile("^Cordoned guest node (\\S+) in cluster "),
          EventReasons.DRAIN_BLOCKED, Pattern.compile("^Guest node (\\S+) not drained yet"),
          EventReasons.DRAIN_REFUSED, Pattern.compile("^Drain of guest node (\\S+) refused"),
          EventReasons.DRAIN_SUCCEEDED, Pattern.compile("^Guest node (\\S+) drained"));

  private static final Pattern SHORTENED =
      Pattern.compile("^Deadline moved earlier to (\\S+) by (.+?) \\(shorter than");

  /** The guest node an event names, if it is one that names it. */
  static Optional<String> guestNode(VmiEvent e) {
    Pattern p = GUEST_NODE.get(e.reason());
    if (p == null || e.message() == null) {
      return Optional.empty();
    }
    Matcher m = p.matcher(e.message());
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /** The deadline a {@code DrainDeadlineShortened} event announces, with what set it. */
  static Optional<DeadlineEstimate> shortenedDeadline(VmiEvent e) {
    if (!EventReasons.DRAIN_DEADLINE_SHORTENED.equals(e.reason()) || e.message() == null) {
      return Optional.empty();
    }
    Matcher m = SHORTENED.matcher(e.message());
    if (!m.find()) {
      return Optional.empty();
    }
    return rfc3339(m.group(1)).map(at -> new DeadlineEstimate(at, m.group(2)));
  }

  /** An RFC 3339 time, or empty when there is none or it does not parse. */
  static Optional<Instant> rfc3339(String text) {
    if (text == null || text.isBlank()) {
      return Optional.empty();
    }
    try {
      return Optional.of(OffsetDateTime.parse(text.trim()).toInstant());
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }
}
