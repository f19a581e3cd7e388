package dev.capk.vmieviction.drain;

import java.util.Objects;

/**
 * What one {@link PodFilter} decides about one pod. Filters run in order; the first verdict that is
 * not {@link Action#DELETE} ends the chain (as in kubectl), and a DELETE verdict may carry a
 * warning.
 */
public record PodVerdict(Action action, String reason, boolean warning) {
  public enum Action {
    /** Evict (or delete) the pod, unless a later filter decides otherwise. */
    DELETE,
    /** Leave the pod where it is; the drain goes on. */
    SKIP,
    /** The drain must not proceed while this pod is there: nothing is evicted. */
    REFUSE
  }

  private static final PodVerdict DELETE_PLAIN = new PodVerdict(Action.DELETE, "", false);

  public PodVerdict {
    Objects.requireNonNull(action, "action");
    reason = reason == null ? "" : reason;
    if (action == Action.REFUSE && reason.isBlank()) {
      throw new IllegalArgumentException("a refusal needs a reason");
    }
  }

  public static PodVerdict delete() {
    return DELETE_PLAIN;
  }

  public static PodVerdict deleteWithWarning(String warning) {
    return new PodVerdict(Action.DELETE, warning, true);
  }

  public static PodVerdict skip(String reason) {
    return new PodVerdict(Action.SKIP, reason, false);
  }

  public static PodVerdict skipWithWarning(String warning) {
    return new PodVerdict(Action.SKIP, warning, true);
  }

  public static PodVerdict refuse(String reason) {
    return new PodVerdict(Action.REFUSE, reason, false);
  }

  public boolean deletes() {
    return action == Action.DELETE;
  }
}
