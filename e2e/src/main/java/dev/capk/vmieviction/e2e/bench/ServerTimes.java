package dev.capk.vmieviction.e2e.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The API servers' own times of what the head-of-line benchmark times, read from their audit logs
 * (the policies {@link #INFRA_RULES} and {@link #GUEST_RULES} log just those requests): when a
 * VMI's marking was stored, when the VMI's delete request arrived, when a guest pod was removed.
 * All API servers run on this machine, so their times share one clock; a watch that falls behind a
 * burst (and is resumed) cannot make them late.
 */
final class ServerTimes {

  /** The infra API server logs the VMIs' status patches (the marking) and deletions. */
  static final String INFRA_RULES =
      """
      - level: Metadata
        verbs: ["delete"]
        resources: [{group: "kubevirt.io", resources: ["virtualmachineinstances"]}]
      - level: Metadata
        verbs: ["patch"]
        resources: [{group: "kubevirt.io", resources: ["virtualmachineinstances/status"]}]
      """;

  /** A guest API server logs pod deletions (kwok's, which complete a graceful deletion). */
  static final String GUEST_RULES =
      """
      - level: Metadata
        verbs: ["delete"]
        resources: [{group: "", resources: ["pods"]}]
      """;

  private final Map<String, Instant> marked = new HashMap<>();
  private final Map<String, Instant> deleteRequested = new HashMap<>();
  private final Map<String, Instant> podRemoved = new HashMap<>();

  private ServerTimes() {}

  /** Reads the infra API server's log and the guests' logs. */
  static ServerTimes read(Path infraLog, List<Path> guestLogs) {
    ServerTimes t = new ServerTimes();
    for (AuditLog.Entry e : AuditLog.entries(infraLog)) {
      if (e.code() != 200 || !"virtualmachineinstances".equals(e.resource())) {
        continue;
      }
      if (e.verb().equals("patch") && "status".equals(e.subresource())) {
        // The last status patch is the marking (the VMI's creation patched its status before).
        t.marked.merge(e.name(), e.completed(), (a, b) -> a.isAfter(b) ? a : b);
      } else if (e.verb().equals("delete") && e.subresource() == null) {
        t.deleteRequested.merge(e.name(), e.received(), (a, b) -> a.isBefore(b) ? a : b);
      }
    }
    for (Path log : guestLogs) {
      for (AuditLog.Entry e : AuditLog.entries(log)) {
        if (e.code() == 200 && e.verb().equals("delete") && e.subresource() == null) {
          t.podRemoved.merge(e.name(), e.completed(), (a, b) -> a.isAfter(b) ? a : b);
        }
      }
    }
    return t;
  }

  /** When the API server stored the VMI's {@code status.evacuationNodeName}. */
  Optional<Instant> marked(String vmi) {
    return Optional.ofNullable(marked.get(vmi));
  }

  /** When the controller's delete request of the VMI arrived. */
  Optional<Instant> deleteRequested(String vmi) {
    return Optional.ofNullable(deleteRequested.get(vmi));
  }

  /** When the last of {@code pods} was removed; empty unless all were. */
  Optional<Instant> lastRemoved(List<String> pods) {
    Instant last = null;
    for (String pod : pods) {
      Instant at = podRemoved.get(pod);
      if (at == null) {
        return Optional.empty();
      }
      last = last == null || at.isAfter(last) ? at : last;
    }
    return Optional.ofNullable(last);
  }

  /**
   * Seconds from VMI {@code vmi}'s marking to the arrival of the first request to delete it, both
   * in [from, to): for a world whose VMIs come back under the same names, where the last marking of
   * the whole log may be a later run's. Empty unless both are in the window.
   */
  static Optional<Double> evacuationSeconds(Path infraLog, String vmi, Instant from, Instant to) {
    Instant marked = null;
    for (AuditLog.Entry e : AuditLog.entries(infraLog)) {
      if (!vmi.equals(e.name())
          || !"virtualmachineinstances".equals(e.resource())
          || e.received().isBefore(from)
          || !e.received().isBefore(to)) {
        continue;
      }
      if (e.verb().equals("patch") && "status".equals(e.subresource()) && e.code() == 200) {
        marked = e.completed();
      } else if (e.verb().equals("delete") && e.subresource() == null && marked != null) {
        return Optional.of(seconds(marked, e.received()));
      }
    }
    return Optional.empty();
  }

  static double seconds(Instant from, Instant to) {
    return Duration.between(from, to).toNanos() / 1e9;
  }
}
