package dev.capk.vmieviction.drain;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Sends requests built by the official client's API classes (so paths, auth and TLS are the client's)
 * and reads answers with a lenient Gson. Why: the generated models reject any field they do not know, so
 * a newer API server (a field added to Pod or Node) would break a drain; and an eviction's answer is a
 * Status the drain does not need to parse at all.
 *
 * <p>A drain's requests go through an instance {@linkplain #until bound to the drain's deadline}: each
 * request's total time (connect, send, read the whole answer) is then cut to what is left, so a server
 * that answers slowly, a byte at a time, cannot hold the caller past the deadline.
 */
final class RawApi {
    /** The client's Gson setup (dates, quantities, int-or-string) without its strict per-model validators. */
    static final Gson LENIENT = JSON.createGson()
            .registerTypeAdapter(OffsetDateTime.class, new JSON.OffsetDateTimeTypeAdapter())
            .registerTypeAdapter(LocalDate.class, new JSON.LocalDateTypeAdapter())
            .registerTypeAdapter(byte[].class, new JSON.ByteArrayAdapter())
            .create();

    /** An HTTP answer: status code, body (may be empty) and headers. */
    record Answer(int code, String body, Map<String, List<String>> headers) {
        boolean ok() {
            return code >= 200 && code < 300;
        }

        ApiException toException() {
            ApiStatus s = ApiStatus.parse(code, body);
            String msg = s.message().isEmpty() ? "HTTP " + code : s.message();
            return new ApiException(msg, code, headers, body);
        }
    }

    private final ApiClient client;
    private final Deadline deadline;

    RawApi(ApiClient client) {
        this(client, Deadline.NONE);
    }

    private RawApi(ApiClient client, Deadline deadline) {
        this.client = client;
        this.deadline = deadline;
    }

    /** The same client, with every request ending by {@code deadline}. */
    RawApi until(Deadline deadline) {
        return new RawApi(client, deadline);
    }

    /**
     * Cuts the call's total timeout (the client's call timeout, or one the caller set; 0 = none) to the
     * time left before the deadline. Must be called before the call is executed.
     *
     * @throws ApiException with code 0, as for a request that got no answer, if no time is left
     */
    void bound(Call call) throws ApiException {
        if (deadline.none()) {
            return;
        }
        long left = deadline.remainingNanos();
        if (left <= 0) {
            throw new ApiException(new InterruptedIOException("the drain's deadline passed before the request"));
        }
        long own = call.timeout().timeoutNanos();
        call.timeout().timeout(own == 0 ? left : Math.min(own, left), TimeUnit.NANOSECONDS);
    }

    ApiClient client() {
        return client;
    }

    /** Executes the call; a transport failure becomes an ApiException with code 0, as the client reports it. */
    Answer execute(Call call) throws ApiException {
        bound(call);
        try (Response response = call.execute()) {
            ResponseBody body = response.body();
            return new Answer(response.code(), body == null ? "" : body.string(), response.headers().toMultimap());
        } catch (IOException e) {
            throw new ApiException(e);
        }
    }

    /** Executes the call and parses a 2xx body as {@code type}; any other status becomes an ApiException. */
    <T> T get(Call call, Class<T> type) throws ApiException {
        Answer a = execute(call);
        if (!a.ok()) {
            throw a.toException();
        }
        return parse(a.body(), type);
    }

    static <T> T parse(String json, Class<T> type) throws ApiException {
        try {
            return LENIENT.fromJson(json, type);
        } catch (RuntimeException e) {
            throw new ApiException("cannot parse the API server's answer as " + type.getSimpleName() + ": " + e.getMessage());
        }
    }

    static <T> T parse(JsonElement json, Class<T> type) {
        return LENIENT.fromJson(json, type);
    }
}
