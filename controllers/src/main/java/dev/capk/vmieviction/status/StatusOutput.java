package dev.capk.vmieviction.status;

import com.google.gson.GsonBuilder;
import dev.capk.vmieviction.status.EvacuationStatuses.DeadlineEstimate;
import dev.capk.vmieviction.status.EvacuationStatuses.EvacuationStatus;
import dev.capk.vmieviction.status.EvacuationStatuses.VmiEvent;
import dev.capk.vmieviction.time.GoDuration;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The status as kubectl prints tables: columns padded to their widest cell, three spaces apart,
 * {@code <none>} for a missing value. The default view cuts the blocker's message before its
 * deadline clause (TIME-LEFT says it); {@code -o wide} adds columns and the whole message; {@code
 * -o json} is for scripts.
 */
public final class StatusOutput {
  private StatusOutput() {}

  static final String NONE = "<none>";

  /** The clause of the controller's messages that restates the deadline (TIME-LEFT says it). */
  private static final Pattern DEADLINE_CLAUSE =
      Pattern.compile("(?<=.); (retrying, VMI deleted|VMI deleted|goes ahead) anyway at .*$");

  /** A column: its header, whether only {@code -o wide} shows it, its cell (wide or not). */
  private record Column(
      String header, boolean wideOnly, BiFunction<EvacuationStatus, Boolean, String> cell) {
    Column(String header, boolean wideOnly, Function<EvacuationStatus, String> cell) {
      this(header, wideOnly, (s, wide) -> cell.apply(s));
    }
  }

  private static final List<Column> COLUMNS =
      List.of(
          new Column("NAMESPACE", false, EvacuationStatus::namespace),
          new Column("VMI", false, EvacuationStatus::name),
          new Column("CLUSTER", false, s -> orNone(s.cluster())),
          new Column("ROLE", true, s -> orNone(s.role())),
          new Column("GUEST-NODE", false, s -> s.guestNode().orElse(NONE)),
          new Column("INFRA-NODE", false, s -> orNone(s.infraNode())),
          new Column("PHASE", false, s -> s.phase().name()),
          new Column("STARTED", true, s -> s.drainStart().map(StatusOutput::time).orElse(NONE)),
          new Column("DEADLINE", true, s -> s.deadline().map(d -> time(d.at())).orElse(NONE)),
          new Column(
              "DEADLINE-FROM", true, s -> s.deadline().map(DeadlineEstimate::source).orElse(NONE)),
          new Column("TIME-LEFT", false, s -> timeLeft(s.timeLeft())),
          new Column("REASON", true, s -> s.blockedBy().map(VmiEvent::reason).orElse(NONE)),
          new Column(
              "BLOCKED-BY",
              false,
              (s, wide) ->
                  s.blockedBy()
                      .map(e -> oneLine(e.message()))
                      .map(m -> wide ? m : DEADLINE_CLAUSE.matcher(m).replaceFirst(""))
                      .orElse(NONE)));

  /** The table's lines, headers first. */
  public static List<String> lines(List<EvacuationStatus> statuses, boolean wide) {
    List<Column> shown = COLUMNS.stream().filter(c -> wide || !c.wideOnly()).toList();
    List<List<String>> rows = new ArrayList<>();
    rows.add(shown.stream().map(Column::header).toList());
    for (EvacuationStatus s : statuses) {
      rows.add(shown.stream().map(c -> c.cell().apply(s, wide)).toList());
    }
    return align(rows);
  }

  /** Time left as kubectl prints ages ({@code 9m12s}), negative once passed. */
  static String timeLeft(Optional<Duration> left) {
    return left.map(d -> d.isNegative() ? "-" + human(d.negated()) : human(d)).orElse("<unknown>");
  }

  static String human(Duration d) {
    long s = d.toSeconds();
    long m = s / 60;
    return s < 2 * 60 ? s + "s" : m < 60 ? two(m, "m", s % 60, "s") : two(m / 60, "h", m % 60, "m");
  }

  /** {@code 9m12s}, or {@code 9m} when the smaller unit is zero. */
  private static String two(long big, String bigUnit, long small, String smallUnit) {
    return big + bigUnit + (small == 0 ? "" : small + smallUnit);
  }

  private static String oneLine(String message) {
    return message == null || message.isBlank() ? NONE : message.replaceAll("\\s+", " ").trim();
  }

  private static String time(Instant t) {
    return t.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  private static String orNone(String s) {
    return s == null || s.isEmpty() ? NONE : s;
  }

  /** {@code -o json}: the wide table's fields, RFC 3339 times, absent values left out. */
  public static String json(List<EvacuationStatus> statuses, Instant now, Duration drainTimeout) {
    List<Map<String, Object>> items = new ArrayList<>();
    for (EvacuationStatus s : statuses) {
      Map<String, Object> o = new LinkedHashMap<>(); // Gson leaves null values out
      o.put("namespace", s.namespace());
      o.put("name", s.name());
      o.put("uid", s.uid());
      o.put("cluster", s.cluster());
      o.put("role", s.role());
      o.put("guestNode", s.guestNode().orElse(null));
      o.put("infraNode", s.infraNode());
      o.put("phase", s.phase().name());
      o.put("drainStart", s.drainStart().map(Instant::toString).orElse(null));
      o.put("deadline", s.deadline().map(d -> d.at().toString()).orElse(null));
      o.put("deadlineFrom", s.deadline().map(DeadlineEstimate::source).orElse(null));
      o.put("secondsLeft", s.timeLeft().map(Duration::toSeconds).orElse(null));
      o.values().removeIf(""::equals); // an absent label or node
      s.blockedBy()
          .ifPresent(
              e -> {
                Map<String, Object> b = new LinkedHashMap<>();
                b.put("reason", e.reason());
                b.put("message", e.message());
                b.put("lastSeen", e.lastSeen().toString());
                o.put("blockedBy", b);
              });
      items.add(o);
    }
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("time", time(now));
    root.put("drainTimeout", GoDuration.format(drainTimeout));
    root.put("evacuations", items);
    return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(root);
  }

  /** Pads every column but the last to its widest cell; three spaces between columns. */
  private static List<String> align(List<List<String>> rows) {
    int[] width = new int[rows.get(0).size()];
    for (List<String> r : rows) {
      for (int i = 0; i < width.length; i++) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    int last = width.length - 1;
    return rows.stream()
        .map(
            r ->
                IntStream.range(0, last)
                        .mapToObj(i -> r.get(i) + " ".repeat(width[i] - r.get(i).length() + 3))
                        .collect(Collectors.joining())
                    + r.get(last))
        .toList();
  }
}
