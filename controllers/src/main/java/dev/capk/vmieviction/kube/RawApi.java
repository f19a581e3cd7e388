package dev.capk.vmieviction.kube;

import com.google.common.base.Throwables;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.openapi.models.V1StatusCause;
import io.kubernetes.client.util.ProxyContentTypeRequestBody;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Calls the API and says what its answer means. Sends requests built by the official client's API
 * classes and hands back the raw answer, read with {@link LenientJson} (the client's own strict
 * reading rejects fields its model does not know), its metav1.{@link Status} too; through an
 * instance {@linkplain #until bound to a deadline} each request's total time is cut to what is
 * left: a server answering a byte at a time cannot hold the caller past it. {@link Meaning} is the
 * one table of what an answer means; the {@code describe} methods name a failure without leaking
 * what a server echoed.
 */
public record RawApi(ApiClient client, Deadline deadline) {

  /** An HTTP answer; the body may be empty. */
  public record Answer(int code, String body, Map<String, List<String>> headers) {
    public boolean ok() {
      return code >= 200 && code < 300;
    }

    /** This answer, if it is a success; else its Status message as an ApiException. */
    public Answer orThrow() throws ApiException {
      if (!ok()) {
        throw toException();
      }
      return this;
    }

    public ApiException toException() {
      String msg = Status.parse(body).message();
      return new ApiException(msg.isEmpty() ? "HTTP " + code : msg, code, headers, body);
    }
  }

  /** The metav1.Status an API error carries; absent fields are empty. */
  public record Status(String reason, String message, List<V1StatusCause> causes) {
    public Status {
      reason = Objects.toString(reason, "");
      message = Objects.toString(message, "");
      causes = causes == null ? List.of() : List.copyOf(causes);
    }

    public static Status parse(String body) {
      V1Status s;
      try {
        s = body == null ? null : LenientJson.GSON.fromJson(body, V1Status.class);
      } catch (RuntimeException notJson) {
        // A proxy's HTML page or plain text: keep it, shortened, as the message.
        String text = body.strip();
        return new Status(
            "", text.length() > 200 ? text.substring(0, 200) + "..." : text, List.of());
      }
      s = s == null ? new V1Status() : s;
      List<V1StatusCause> causes = s.getDetails() == null ? null : s.getDetails().getCauses();
      return new Status(s.getReason(), s.getMessage(), causes);
    }

    public boolean hasCause(String causeReason) {
      return causes.stream().anyMatch(c -> causeReason.equals(c.getReason()));
    }
  }

  /**
   * What an answer that is not a success means: the one table every write (and every read that
   * feeds a decision) goes by. docs/design.md gives the same table; ApiAnswerTest checks each row.
   */
  public enum Meaning {
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
  public static Meaning meaning(int code, String body, boolean mustExist) {
    return switch (code) {
      case 0, 408, 429 -> Meaning.TRANSIENT;
      case 409 -> Meaning.CONFLICT;
      case 404 -> mustExist ? Meaning.REFUSED : Meaning.GONE;
      // Validation errors and admission denials have details or their own message.
      case 422 -> {
        Status s = Status.parse(body);
        yield s.causes().isEmpty() && PATCH_NOT_APPLIED_MESSAGE.equals(s.message())
            ? Meaning.PATCH_NOT_APPLIED
            : Meaning.REFUSED;
      }
      default -> code >= 500 ? Meaning.TRANSIENT : Meaning.REFUSED;
    };
  }

  public static Meaning meaning(ApiException e, boolean mustExist) {
    return meaning(e.getCode(), e.getResponseBody(), mustExist);
  }

  public RawApi(ApiClient client) {
    this(client, Deadline.NONE);
  }

  /** The same client, with every request ending by {@code deadline}. */
  public RawApi until(Deadline deadline) {
    return new RawApi(client, deadline);
  }

  /**
   * Cuts the call's total timeout to the time left before {@code deadline}, before it executes; no
   * time left: an ApiException with code 0, as for no answer.
   */
  public static void bound(Call call, Deadline deadline) throws ApiException {
    if (deadline.none()) {
      return;
    }
    long left = deadline.remaining().toNanos();
    if (left <= 0) {
      throw new ApiException(new InterruptedIOException("the deadline passed before the request"));
    }
    long own = call.timeout().timeoutNanos();
    call.timeout().timeout(own == 0 ? left : Math.min(own, left), TimeUnit.NANOSECONDS);
  }

  public void bound(Call call) throws ApiException {
    bound(call, deadline);
  }

  /** The generated request guesses a patch's content type from its text: say which it is. */
  public static Call asMergePatch(ApiClient client, Call built) {
    return withPatchType(client, built, V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH);
  }

  public static Call asJsonPatch(ApiClient client, Call built) {
    return withPatchType(client, built, V1Patch.PATCH_FORMAT_JSON_PATCH);
  }

  private static Call withPatchType(ApiClient client, Call built, String contentType) {
    Request request = built.request();
    return client
        .getHttpClient()
        .newCall(
            request
                .newBuilder()
                .patch(new ProxyContentTypeRequestBody(request.body(), contentType))
                .build());
  }

  /** Executes the call; a transport failure is an ApiException with code 0, as the client's. */
  public Answer execute(Call call) throws ApiException {
    bound(call, deadline);
    try (Response response = call.execute()) {
      ResponseBody body = response.body();
      return new Answer(
          response.code(), body == null ? "" : body.string(), response.headers().toMultimap());
    } catch (IOException e) {
      throw new ApiException(e);
    }
  }

  /** A 2xx body parsed as {@code type}; any other status becomes an ApiException. */
  public <T> T get(Call call, Class<T> type) throws ApiException {
    return LenientJson.parse(execute(call).orThrow().body(), type);
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
    Status s = Status.parse(e.getResponseBody());
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
    return describeWithoutServerText(t, null);
  }

  /**
   * As {@link #describeWithoutServerText(Throwable)}; no answer and {@code serverUrl} not null:
   * naming the server's host and port ({@code ConnectException from 10.0.0.5:6443}), never the
   * URL's user info, path or query.
   */
  public static String describeWithoutServerText(Throwable t, String serverUrl) {
    if (t instanceof ApiException e && e.getCode() != 0) {
      return "HTTP " + e.getCode();
    }
    Throwable kind = t instanceof ApiException ? t.getCause() : t;
    String described = kind == null ? "no response" : kind.getClass().getSimpleName();
    return serverUrl == null ? described : described + " from " + endpoint(serverUrl);
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
    Status s = Status.parse(e.getResponseBody());
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
