package dev.capk.vmieviction.kube;

import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.ProxyContentTypeRequestBody;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Sends requests built by the official client's API classes and hands back the raw answer, read
 * with {@link LenientJson}. Through an instance {@linkplain #until bound to a deadline} each
 * request's total time is cut to what is left: a server answering a byte at a time cannot hold the
 * caller past it.
 */
public final class RawApi {

  /** An HTTP answer; the body may be empty. */
  public record Answer(int code, String body, Map<String, List<String>> headers) {
    public boolean ok() {
      return code >= 200 && code < 300;
    }

    /** This answer, if it is a success; else its Status message as an ApiException. */
    public Answer orThrow() throws ApiException {
      if (ok()) {
        return this;
      }
      throw toException();
    }

    public ApiException toException() {
      ApiStatus s = ApiStatus.parse(code, body);
      String msg = s.message().isEmpty() ? "HTTP " + code : s.message();
      return new ApiException(msg, code, headers, body);
    }
  }

  private final ApiClient client;
  private final Deadline deadline;

  public RawApi(ApiClient client) {
    this(client, Deadline.NONE);
  }

  private RawApi(ApiClient client, Deadline deadline) {
    this.client = client;
    this.deadline = deadline;
  }

  /** The same client, with every request ending by {@code deadline}. */
  public RawApi until(Deadline deadline) {
    return new RawApi(client, deadline);
  }

  public ApiClient client() {
    return client;
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
}
