package dev.capk.vmieviction.maintenance;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * A JSON merge patch of a NodeMaintenance's status subresource: only the fields set here change; a
 * field cleared here is removed. Built fluently, one per write.
 */
public final class StatusPatch {
  private final JsonObject status = new JsonObject();

  public static StatusPatch of() {
    return new StatusPatch();
  }

  public StatusPatch phase(String phase) {
    status.addProperty("phase", phase);
    return this;
  }

  public StatusPatch lastUpdate(Instant now) {
    status.addProperty("lastUpdate", rfc3339(now));
    return this;
  }

  /** Sets lastError, or removes it when null. */
  public StatusPatch lastError(String error) {
    if (error == null) {
      status.add("lastError", JsonNull.INSTANCE);
    } else {
      status.addProperty("lastError", error);
    }
    return this;
  }

  public StatusPatch progress(DrainProgress.Snapshot s) {
    status.addProperty("drainProgress", s.percent());
    status.addProperty("evictionPods", s.evictionPods());
    status.addProperty("totalpods", s.totalPods());
    pendingPods(s.pendingPods());
    return this;
  }

  public StatusPatch drainProgress(int percent) {
    status.addProperty("drainProgress", percent);
    return this;
  }

  /** Sets pendingPods, or removes the field when the list is empty (the operator's omitempty). */
  public StatusPatch pendingPods(List<String> names) {
    if (names == null || names.isEmpty()) {
      status.add("pendingPods", JsonNull.INSTANCE);
    } else {
      JsonArray a = new JsonArray();
      names.forEach(a::add);
      status.add("pendingPods", a);
    }
    return this;
  }

  public boolean isEmpty() {
    return status.size() == 0;
  }

  public String toJson() {
    JsonObject patch = new JsonObject();
    patch.add("status", status);
    return patch.toString();
  }

  /** RFC 3339 in UTC, whole seconds, as Kubernetes writes metav1.Time. */
  static String rfc3339(Instant t) {
    return DateTimeFormatter.ISO_OFFSET_DATE_TIME
        .format(t.truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC))
        .replace("+00:00", "Z");
  }

  @Override
  public String toString() {
    return toJson();
  }
}
