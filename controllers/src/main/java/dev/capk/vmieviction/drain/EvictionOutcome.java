package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.ApiStatus;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What one eviction or deletion request achieved, classified from the HTTP answer. Pure logic. */
public record EvictionOutcome(
    Kind kind, String message, Set<String> budgets, long retryAfterSeconds) {
  public enum Kind {
    /** The server accepted the eviction (or deletion); the pod is going. */
    ACCEPTED,
    /** 404: the pod is already gone. */
    GONE,
    /** 409 on the UID precondition: a new pod has the name; the one we meant is gone. */
    REPLACED,
    /** 429 from a PodDisruptionBudget: retry later. */
    BLOCKED,
    /** 429 from API priority and fairness: the server is busy, retry soon. */
    THROTTLED,
    /** 403 NamespaceTerminating: the namespace is being deleted; the eviction API refuses. */
    NAMESPACE_TERMINATING,
    /**
     * 500: several budgets select the pod, which the eviction API cannot handle; retrying cannot
     * help.
     */
    MULTIPLE_BUDGETS,
    /** Connection failure, timeout, or a 5xx: worth a few retries. */
    TRANSIENT,
    /** 401/403 other than NamespaceTerminating: our identity may not evict (or delete) the pod. */
    FORBIDDEN,
    /** Anything else (invalid, unexpected...): retrying cannot help. */
    FAILED
  }

  /** The cause reason kube-apiserver gives a 403 for an eviction in a namespace being deleted. */
  static final String NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating";

  /** The cause reason kube-apiserver gives each budget that blocks an eviction. */
  static final String DISRUPTION_BUDGET_CAUSE = "DisruptionBudget";

  private static final Pattern BUDGET_NAME =
      Pattern.compile("(?i)disruption budget \"?([a-z0-9][-a-z0-9.]*[a-z0-9]|[a-z0-9])\"?");

  public EvictionOutcome {
    message = message == null ? "" : message;
    budgets = Set.copyOf(budgets);
  }

  static EvictionOutcome accepted() {
    return new EvictionOutcome(Kind.ACCEPTED, "", Set.of(), 0);
  }

  /** A transport failure: no HTTP answer at all. */
  static EvictionOutcome unreachable(String message) {
    return new EvictionOutcome(Kind.TRANSIENT, message, Set.of(), 0);
  }

  /**
   * Classifies an HTTP answer to an eviction or a deletion.
   *
   * @param headers response headers (for Retry-After), may be empty
   */
  public static EvictionOutcome classify(int code, String body, Map<String, List<String>> headers) {
    if (code >= 200 && code < 300) {
      return accepted();
    }
    ApiStatus status = ApiStatus.parse(code, body);
    String msg = status.message().isEmpty() ? "HTTP " + code : status.message();
    String lower = msg.toLowerCase(Locale.ROOT);
    switch (code) {
      case 404:
        return of(Kind.GONE, msg);
      case 409:
        // Evictions and deletions carry a UID precondition; its failure means the pod was replaced.
        if (lower.contains("precondition") || lower.contains("uid")) {
          return of(Kind.REPLACED, msg);
        }
        return of(Kind.TRANSIENT, msg);
      case 429:
        {
          Set<String> budgets = budgetNames(status);
          boolean budget =
              !budgets.isEmpty()
                  || status.hasCause(DISRUPTION_BUDGET_CAUSE)
                  || lower.contains("disruption budget");
          if (budget) {
            return new EvictionOutcome(Kind.BLOCKED, msg, budgets, 0);
          }
          return new EvictionOutcome(Kind.THROTTLED, msg, Set.of(), retryAfter(headers));
        }
      case 403:
        if (status.hasCause(NAMESPACE_TERMINATING_CAUSE)) {
          return of(Kind.NAMESPACE_TERMINATING, msg);
        }
        return of(Kind.FORBIDDEN, msg);
      case 401:
        return of(Kind.FORBIDDEN, msg);
      case 500:
        if (lower.contains("more than one poddisruptionbudget")
            || lower.contains("multiple poddisruptionbudgets")) {
          return of(Kind.MULTIPLE_BUDGETS, msg);
        }
        return of(Kind.TRANSIENT, msg);
      case 408, 502, 503, 504:
        return of(Kind.TRANSIENT, msg);
      default:
        return of(code > 500 ? Kind.TRANSIENT : Kind.FAILED, "HTTP " + code + ": " + msg);
    }
  }

  /**
   * Budget names from the causes of a 429 ("The disruption budget web-pdb needs 2 healthy
   * pods...").
   */
  static Set<String> budgetNames(ApiStatus status) {
    Set<String> names = new LinkedHashSet<>();
    for (ApiStatus.Cause c : status.causes()) {
      if (DISRUPTION_BUDGET_CAUSE.equals(c.reason())) {
        Matcher m = BUDGET_NAME.matcher(c.message());
        if (m.find()) {
          names.add(m.group(1));
        }
      }
    }
    return names;
  }

  private static long retryAfter(Map<String, List<String>> headers) {
    if (headers != null) {
      for (Map.Entry<String, List<String>> e : headers.entrySet()) {
        if ("retry-after".equalsIgnoreCase(e.getKey())
            && e.getValue() != null
            && !e.getValue().isEmpty()) {
          try {
            return Math.max(0, Math.min(30, Long.parseLong(e.getValue().get(0).trim())));
          } catch (NumberFormatException ignored) {
            // An HTTP date: fall back to the default below.
          }
        }
      }
    }
    return 1;
  }

  private static EvictionOutcome of(Kind kind, String message) {
    return new EvictionOutcome(kind, message, Set.of(), 0);
  }
}
