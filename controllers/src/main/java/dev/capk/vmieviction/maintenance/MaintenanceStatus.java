package dev.capk.vmieviction.maintenance;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceStatus;
import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.PodRef;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A maintenance's status in the Node Maintenance Operator's terms, across drain steps, and the
 * merge patches that write it: {@code evictionPods} and {@code totalpods} are counted once, when
 * maintenance first plans the drain; {@code pendingPods} are the pods still to evict; {@code
 * drainProgress} is the share of the former that are gone; {@code lastError} says what holds the
 * drain (a budget, a failing eviction) while something does.
 */
public final class MaintenanceStatus {
  private MaintenanceStatus() {}

  public record Snapshot(
      int evictionPods, int totalPods, List<String> pendingPods, int percent, String lastError) {}

  /**
   * Where the drain stands after {@code step}, with the counts of {@code status} (null, or none
   * yet: the first step that plans pods sets them). Pods only waited for are progress, no error.
   */
  public static Snapshot after(NodeMaintenanceStatus status, DrainStep step) {
    int evictionPods = status == null ? 0 : Objects.requireNonNullElse(status.getEvictionPods(), 0);
    int totalPods = status == null ? 0 : Objects.requireNonNullElse(status.getTotalpods(), 0);
    if (evictionPods == 0 && totalPods == 0) {
      evictionPods = step.planned().size();
      totalPods = step.planned().size() + step.skipped().size();
    }
    List<String> names = step.pending().stream().sorted().map(PodRef::name).toList();
    return new Snapshot(
        evictionPods,
        totalPods,
        names,
        percent(evictionPods, names.size()),
        held(step) ? incompleteMessage(step) : null);
  }

  /** A budget refused a pod, or an eviction fails: the drain is held, not merely under way. */
  static boolean held(DrainStep step) {
    return !step.complete() && (!step.blockingBudgets().isEmpty() || !step.failed().isEmpty());
  }

  /**
   * Share of the pods to evict that are gone, 0..100. New pods may arrive on the node (a pod that
   * tolerates the taints), so more may be pending than were counted at the start.
   */
  public static int percent(int evictionPods, int pending) {
    if (pending == 0 || evictionPods <= 0) {
      return pending == 0 ? 100 : 0;
    }
    return Math.max(0, Math.min(99, (evictionPods - pending) * 100 / evictionPods));
  }

  private static String budgetNames(PodRef pod, Set<String> budgets) {
    if (budgets == null || budgets.isEmpty()) {
      return "a PodDisruptionBudget (or an eviction webhook)";
    }
    return (budgets.size() == 1 ? "PodDisruptionBudget " : "PodDisruptionBudgets ")
        + budgets.stream()
            .sorted()
            .map(b -> b.contains("/") ? b : pod.namespace() + "/" + b)
            .collect(Collectors.joining(", "));
  }

  /**
   * Why the node is not drained yet, one line: the pods left and what holds each (a budget by name,
   * a failure, a slow termination).
   */
  static String incompleteMessage(DrainStep step) {
    List<String> parts = new ArrayList<>();
    for (PodRef p : step.pending()) {
      Set<String> budgets = step.blockingBudgets().get(p);
      String failure = step.failed().get(p);
      if (budgets != null) {
        parts.add(p + " blocked by " + budgetNames(p, budgets));
      } else if (failure != null) {
        parts.add(p + " cannot be evicted: " + failure);
      } else if (step.terminating().contains(p)) {
        parts.add(p + " still terminating");
      } else {
        parts.add(p + " not evicted yet");
      }
    }
    String each = parts.isEmpty() ? "" : " (" + String.join("; ", parts) + ")";
    return "not all pods evicted: " + step.pending().size() + " left" + each + "; retrying";
  }

  /** The status already shows this progress: nothing to write. */
  static boolean shows(NodeMaintenanceStatus status, Snapshot s) {
    if (status == null) {
      return false;
    }
    List<String> pending = status.getPendingPods() == null ? List.of() : status.getPendingPods();
    return Integer.valueOf(s.percent()).equals(status.getDrainProgress())
        && Integer.valueOf(s.evictionPods()).equals(status.getEvictionPods())
        && Integer.valueOf(s.totalPods()).equals(status.getTotalpods())
        && pending.equals(s.pendingPods())
        && Objects.equals(s.lastError(), status.getLastError());
  }

  /** RFC 3339 in UTC, whole seconds, as Kubernetes writes metav1.Time. */
  static String rfc3339(Instant t) {
    return t.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /**
   * A JSON merge patch of the status subresource: only the fields set here change; a field cleared
   * here is removed. Built fluently, one per write.
   */
  public static final class Patch {
    private final JsonObject status = new JsonObject();

    public Patch phase(String phase) {
      status.addProperty("phase", phase);
      return this;
    }

    public Patch lastUpdate(Instant now) {
      status.addProperty("lastUpdate", rfc3339(now));
      return this;
    }

    /** Sets lastError, or removes it when null. */
    public Patch lastError(String error) {
      status.add("lastError", error == null ? JsonNull.INSTANCE : new JsonPrimitive(error));
      return this;
    }

    public Patch progress(Snapshot s) {
      status.addProperty("drainProgress", s.percent());
      status.addProperty("evictionPods", s.evictionPods());
      status.addProperty("totalpods", s.totalPods());
      pendingPods(s.pendingPods());
      return this;
    }

    /** Sets pendingPods, or removes the field when the list is empty (the operator's omitempty). */
    public Patch pendingPods(List<String> names) {
      JsonArray a = new JsonArray();
      names.forEach(a::add);
      status.add("pendingPods", a.isEmpty() ? JsonNull.INSTANCE : a);
      return this;
    }

    public String toJson() {
      JsonObject patch = new JsonObject();
      patch.add("status", status);
      return patch.toString();
    }
  }
}
