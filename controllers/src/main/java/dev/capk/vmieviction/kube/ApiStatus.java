package dev.capk.vmieviction.kube;

import com.google.common.base.Throwables;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.openapi.models.V1StatusCause;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The metav1.Status an API error carries (reason, message, causes), read with {@link LenientJson}
 * (the client's own strict reading rejects fields its model does not know); what an answer means
 * ({@link Answer}); and how to describe a failure without leaking what a server echoed.
 */
public record ApiStatus(int code, String reason, String message, List<Cause> causes) {
  public record Cause(String reason, String message, String field) {
    public Cause {
      reason = Objects.toString(reason, "");
      message = Objects.toString(message, "");
      field = Objects.toString(field, "");
    }
  }

  public ApiStatus {
    reason = Objects.toString(reason, "");
    message = Objects.toString(message, "");
    causes = List.copyOf(causes);
  }

  /**
   * What an answer that is not a success means: the one table every write (and every read that
   * feeds a decision) goes by. docs/design.md gives the same table; ApiAnswerTest checks each row.
   */
  public enum Answer {
    /** 409: the object changed since it was read. Read it again and retry (bounded). */
    CONFLICT,
    /**
     * 422 from a JSON Patch that did not apply (a {@code test} failed, or a path it names is
     * missing): the server does not say which. The caller reads the object again: changed in what
     * the patch depends on, a {@link #CONFLICT}; unchanged, a {@link #REFUSED}.
     */
    PATCH_NOT_APPLIED,
    /** 404 where absence is an answer (a read, a delete): the object is gone. */
    GONE,
    /**
     * 400, 401, 403, 404 where the object must exist, 405, 413, 415, 422 (validation, an admission
     * denial), any other 4xx: the request will not succeed as sent. Named in a Warning, backed off.
     */
    REFUSED,
    /**
     * No answer (connection refused or reset, timeout), 408, 429 (API Priority and Fairness), 5xx:
     * nothing was learnt about the object. Retried with backoff, never taken as "absent".
     */
    TRANSIENT
  }

  /** kube-apiserver's message for a JSON Patch that does not apply (whatever op failed). */
  static final String PATCH_NOT_APPLIED_MESSAGE =
      "the server rejected our request due to an error in our request";

  /** {@code mustExist}: the object must be there (a patch of a node we read): 404 is a refusal. */
  public static Answer answer(int code, String body, boolean mustExist) {
    if (code == 0 || code == 408 || code == 429 || code >= 500) {
      return Answer.TRANSIENT;
    }
    return switch (code) {
      case 409 -> Answer.CONFLICT;
      case 404 -> mustExist ? Answer.REFUSED : Answer.GONE;
      // Validation errors and admission denials have details or their own message.
      case 422 -> {
        ApiStatus s = parse(code, body);
        yield s.causes().isEmpty() && PATCH_NOT_APPLIED_MESSAGE.equals(s.message())
            ? Answer.PATCH_NOT_APPLIED
            : Answer.REFUSED;
      }
      default -> Answer.REFUSED;
    };
  }

  public static Answer answer(ApiException e, boolean mustExist) {
    return answer(e.getCode(), e.getResponseBody(), mustExist);
  }

  public static ApiStatus of(ApiException e) {
    return parse(e.getCode(), e.getResponseBody());
  }

  public static ApiStatus parse(int code, String body) {
    V1Status s;
    try {
      s = body == null ? null : LenientJson.GSON.fromJson(body, V1Status.class);
    } catch (RuntimeException notJson) {
      // A proxy's HTML page or plain text: keep it, shortened, as the message.
      String text = body.strip();
      return new ApiStatus(
          code, "", text.length() > 200 ? text.substring(0, 200) + "..." : text, List.of());
    }
    if (s == null) {
      return new ApiStatus(code, "", "", List.of());
    }
    List<V1StatusCause> causes = s.getDetails() == null ? null : s.getDetails().getCauses();
    return new ApiStatus(
        code,
        s.getReason(),
        s.getMessage(),
        causes == null
            ? List.of()
            : causes.stream()
                .map(c -> new Cause(c.getReason(), c.getMessage(), c.getField()))
                .toList());
  }

  public boolean hasCause(String causeReason) {
    return causes.stream().anyMatch(c -> causeReason.equals(c.reason()));
  }

  /**
   * One line for an API failure with the server's own words (code, reason, message; never request
   * headers). For servers we trust to say nothing secret; else {@link #describeWithoutServerText}.
   */
  public static String describe(ApiException e) {
    if (e.getCode() == 0) {
      Throwable root = Throwables.getRootCause(e);
      String what = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
      return "cannot reach the API server: " + what;
    }
    ApiStatus s = of(e);
    String text =
        !s.message().isEmpty()
            ? s.message()
            : e.getMessage() != null && !e.getMessage().isBlank() ? e.getMessage() : "no message";
    return "HTTP " + e.getCode() + (s.reason().isEmpty() ? "" : " " + s.reason()) + ": " + text;
  }

  /**
   * One line for a failed call to a server whose answers may echo what it was sent (a guest
   * cluster): the HTTP status, or the kind of failure; never response text nor an exception message
   * (which may hold a URL with credentials).
   */
  public static String describeWithoutServerText(Throwable t) {
    if (t instanceof ApiException e) {
      if (e.getCode() != 0) {
        return "HTTP " + e.getCode();
      }
      return e.getCause() == null ? "no response" : e.getCause().getClass().getSimpleName();
    }
    return t.getClass().getSimpleName();
  }

  /**
   * As {@link #describeWithoutServerText(Throwable)}, naming the unreachable server's host and port
   * ({@code ConnectException from 10.0.0.5:6443}), never the URL's user info, path or query.
   */
  public static String describeWithoutServerText(Throwable t, String serverUrl) {
    String described = describeWithoutServerText(t);
    boolean answered = t instanceof ApiException e && e.getCode() != 0;
    return answered ? described : described + " from " + endpoint(serverUrl);
  }

  /** {@code host:port} of an API server URL (the scheme's port when it names none). */
  private static String endpoint(String serverUrl) {
    try {
      URI uri = URI.create(serverUrl);
      if (uri.getHost() == null) {
        return "a server URL without a host";
      }
      int port = uri.getPort() != -1 ? uri.getPort() : "http".equals(uri.getScheme()) ? 80 : 443;
      return uri.getHost() + ":" + port;
    } catch (RuntimeException e) {
      return "a server URL that cannot be parsed";
    }
  }

  /** The longest server message a refusal's description keeps. */
  static final int MAX_REFUSAL_MESSAGE = 300;

  /** Taken for credentials: no policy name, field or reason is this long without a break. */
  private static final Pattern CREDENTIAL_LIKE = Pattern.compile("[A-Za-z0-9+/=_.~-]{40,}");

  /**
   * One line naming a refusal: HTTP status, Status reason and the server's message (a policy's own
   * words), credential-like runs and control characters removed, shortened.
   */
  public static String describeRefusal(ApiException e) {
    if (e.getCode() == 0) {
      return describeWithoutServerText(e);
    }
    ApiStatus s = of(e);
    String text =
        CREDENTIAL_LIKE
            .matcher(s.message().replaceAll("\\p{Cntrl}", " ").strip())
            .replaceAll("[redacted]");
    if (text.length() > MAX_REFUSAL_MESSAGE) {
      text = text.substring(0, MAX_REFUSAL_MESSAGE) + "...";
    }
    // A reason is one word of metav1's list (Invalid, Forbidden...): anything else is not shown.
    String reason = s.reason().matches("[A-Za-z]{1,40}") ? " " + s.reason() : "";
    return "HTTP " + e.getCode() + reason + (text.isEmpty() ? "" : ": " + text);
  }
}
