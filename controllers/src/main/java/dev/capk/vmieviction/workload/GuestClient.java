package dev.capk.vmieviction.workload;

import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.retry.Retry;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * A client for one guest cluster, built from one version of its kubeconfig Secret. Every call goes
 * through a retry (transient errors) inside the cluster's circuit breaker, so a dead guest API
 * fails fast instead of holding workers. Each request has a total time bound (the HTTP client's
 * call timeout), and a client {@linkplain #until bound to a VMI's deadline} never lets one run past
 * it.
 */
public final class GuestClient implements AutoCloseable {

  /** A call against the guest API. */
  @FunctionalInterface
  public interface GuestCall<T> {
    T call() throws ApiException;
  }

  /**
   * A request built by the official client's API classes, not yet sent ({@code buildCall(null)}).
   */
  @FunctionalInterface
  public interface Request {
    okhttp3.Call build() throws ApiException;
  }

  private final GuestClusterRef cluster;
  private final ApiClient apiClient;
  private final String secretVersion;
  private final CircuitBreaker circuitBreaker;
  private final Retry retry;
  private final TenantThrottle throttle;

  /** By when every request must have ended; {@link Deadline#NONE}: the call timeout alone. */
  private final Deadline deadline;

  GuestClient(
      GuestClusterRef cluster,
      ApiClient apiClient,
      String secretVersion,
      CircuitBreaker circuitBreaker,
      Retry retry,
      TenantThrottle throttle) {
    this(cluster, apiClient, secretVersion, circuitBreaker, retry, throttle, Deadline.NONE);
  }

  private GuestClient(
      GuestClusterRef cluster,
      ApiClient apiClient,
      String secretVersion,
      CircuitBreaker circuitBreaker,
      Retry retry,
      TenantThrottle throttle,
      Deadline deadline) {
    this.throttle = throttle;
    this.cluster = cluster;
    this.apiClient = apiClient;
    this.secretVersion = secretVersion;
    this.circuitBreaker = circuitBreaker;
    this.retry = retry;
    this.deadline = deadline;
  }

  /**
   * This client, for one reconcile of a VMI: every request sent through {@link #call(String,
   * Request, Type)} also ends within {@code timeLeft} from now (the VMI's deadline), so a slow
   * guest cannot push the VMI's deletion back. Shares connections, breaker and retry with this
   * client.
   */
  public GuestClient until(Duration timeLeft) {
    return new GuestClient(
        cluster,
        apiClient,
        secretVersion,
        circuitBreaker,
        retry,
        throttle,
        Deadline.after(timeLeft));
  }

  /** Admits this cluster's reconcile steps (shared by every client of the cluster). */
  public TenantThrottle throttle() {
    return throttle;
  }

  public GuestClusterRef cluster() {
    return cluster;
  }

  /** For components that make their own calls (the drain engine). */
  public ApiClient apiClient() {
    return apiClient;
  }

  public CoreV1Api core() {
    return new CoreV1Api(apiClient);
  }

  /** {@code wanted}, cut to what is left before this client's deadline. */
  public Duration bound(Duration wanted) {
    return deadline.cap(wanted);
  }

  String secretVersion() {
    return secretVersion;
  }

  /**
   * Runs one guest API call with retry and circuit breaker. A non-transient API answer (404, 409,
   * 422) comes back as the {@link ApiException}; 401/403 and exhausted transient failures become a
   * {@link GuestAccessException} with a specific reason.
   */
  public <T> T call(String what, GuestCall<T> call) throws ApiException, GuestAccessException {
    Callable<T> guarded =
        Retry.decorateCallable(retry, CircuitBreaker.decorateCallable(circuitBreaker, call::call));
    try {
      return guarded.call();
    } catch (CallNotPermittedException e) {
      throw circuitOpen(what);
    } catch (ApiException e) {
      throw translate(what, e);
    } catch (Exception e) {
      throw failed(what, e);
    }
  }

  /**
   * Sends one request with retry and circuit breaker, as {@link #call(String, GuestCall)}, each
   * attempt bounded by the call timeout cut to what is left before this client's deadline.
   *
   * @param returnType the answer's model type, or null to ignore the answer
   */
  public <T> T call(String what, Request request, Type returnType)
      throws ApiException, GuestAccessException {
    if (deadline.passed()) {
      throw deadlineReached(what);
    }
    return call(what, () -> this.<T>send(request.build(), returnType));
  }

  /**
   * One attempt through the breaker, bounded like {@link #call(String, Request, Type)}: for
   * best-effort requests.
   */
  public <T> T callOnce(String what, Request request, Type returnType) throws Exception {
    if (deadline.passed()) {
      throw deadlineReached(what);
    }
    return guarded(what, () -> this.<T>send(request.build(), returnType));
  }

  private <T> T send(okhttp3.Call call, Type returnType) throws ApiException {
    RawApi.bound(call, deadline);
    return apiClient.<T>execute(call, returnType).getData();
  }

  private GuestAccessException deadlineReached(String what) {
    return new GuestAccessException(
        GuestAccessException.Reason.GuestAPIUnavailable,
        "guest cluster " + cluster + ": no time left before the VMI's deadline for " + what);
  }

  /**
   * Runs a long guest operation (a drain pass) inside the circuit breaker, without retry: the
   * operation handles its own retries and timeouts.
   */
  public <T> T guarded(String what, Callable<T> op) throws Exception {
    try {
      return circuitBreaker.executeCallable(op);
    } catch (CallNotPermittedException e) {
      throw circuitOpen(what);
    }
  }

  /** The cluster's circuit breaker is open: fail at once, without a request. */
  private GuestAccessException circuitOpen(String what) {
    return new GuestAccessException(
        GuestAccessException.Reason.GuestAPIUnavailable,
        "guest cluster "
            + cluster
            + ": API server failing, calls paused (circuit open) while "
            + what);
  }

  /**
   * An API answer of a guest call (ours, or the drain engine's), as the reconciler sees it: a
   * rejected certificate, 401/403 and transient failures become a {@link GuestAccessException}; any
   * other answer (404, 409, 422) comes back to be rethrown.
   */
  public ApiException translate(String what, ApiException e) throws GuestAccessException {
    if (GuestCalls.isCertificateRejected(e)) {
      throw certificateRejected(what, e);
    }
    if (GuestCalls.isForbidden(e)) {
      throw new GuestAccessException(
          GuestAccessException.Reason.GuestAPIForbidden,
          "guest cluster "
              + cluster
              + ": "
              + what
              + " denied ("
              + ApiStatus.describeRefusal(e)
              + ")");
    }
    if (GuestCalls.isTransient(e)) {
      throw unavailable(what, e);
    }
    return e;
  }

  /**
   * A guest call that got no API answer: a rejected certificate, else the API server is
   * unavailable.
   */
  public GuestAccessException failed(String what, Exception e) {
    if (GuestCalls.isCertificateRejected(e)) {
      return certificateRejected(what, e);
    }
    return unavailable(what, e);
  }

  /** Transient failures, or no answer at all: the guest API server is unavailable for now. */
  private GuestAccessException unavailable(String what, Throwable e) {
    return new GuestAccessException(
        GuestAccessException.Reason.GuestAPIUnavailable,
        "guest cluster "
            + cluster
            + ": "
            + what
            + " failed: "
            + ApiStatus.describeWithoutServerText(e, apiClient.getBasePath()));
  }

  /**
   * The server's certificate does not match the kubeconfig: refused, never retried without checks.
   */
  private GuestAccessException certificateRejected(String what, Throwable e) {
    return new GuestAccessException(
        GuestAccessException.Reason.GuestAPICertificateRejected,
        "guest cluster "
            + cluster
            + ": "
            + what
            + " refused: the API server's TLS certificate does not match"
            + " the kubeconfig's certificate-authority-data or server ("
            + ApiStatus.describeWithoutServerText(e, apiClient.getBasePath())
            + ")");
  }

  @Override
  public void close() {
    // Only idle connections are dropped: a worker may still be using this client.
    apiClient.getHttpClient().connectionPool().evictAll();
  }
}
