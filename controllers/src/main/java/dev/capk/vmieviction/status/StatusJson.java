package dev.capk.vmieviction.status;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.time.GoDuration;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * The status for scripts ({@code -o json}): every field of the wide table, times in RFC 3339,
 * {@code secondsLeft} a number (negative once the deadline passed), absent values left out, the
 * blocker's whole message.
 */
public final class StatusJson {
  private StatusJson() {}

  public static String of(List<EvacuationStatus> statuses, Instant now, Duration drainTimeout) {
    JsonObject root = new JsonObject();
    root.addProperty("time", now.truncatedTo(ChronoUnit.SECONDS).toString());
    root.addProperty("drainTimeout", GoDuration.format(drainTimeout));
    JsonArray items = new JsonArray();
    for (EvacuationStatus s : statuses) {
      items.add(item(s));
    }
    root.add("evacuations", items);
    return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(root);
  }

  private static JsonObject item(EvacuationStatus s) {
    JsonObject o = new JsonObject();
    o.addProperty("namespace", s.namespace());
    o.addProperty("name", s.name());
    o.addProperty("uid", s.uid());
    addIfSet(o, "cluster", s.cluster());
    addIfSet(o, "role", s.role());
    s.guestNode().ifPresent(n -> o.addProperty("guestNode", n));
    addIfSet(o, "infraNode", s.infraNode());
    o.addProperty("phase", s.phase().name());
    s.drainStart().ifPresent(t -> o.addProperty("drainStart", t.toString()));
    s.deadline()
        .ifPresent(
            d -> {
              o.addProperty("deadline", d.at().toString());
              o.addProperty("deadlineFrom", d.source());
            });
    s.timeLeft().ifPresent(d -> o.addProperty("secondsLeft", d.toSeconds()));
    s.blockedBy()
        .ifPresent(
            e -> {
              JsonObject b = new JsonObject();
              b.addProperty("reason", e.reason());
              b.addProperty("message", e.message());
              b.addProperty("lastSeen", e.lastSeen().toString());
              o.add("blockedBy", b);
            });
    return o;
  }

  private static void addIfSet(JsonObject o, String key, String value) {
    if (value != null && !value.isEmpty()) {
      o.addProperty(key, value);
    }
  }
}
