package dev.capk.vmieviction.workload;

import com.google.common.base.Throwables;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.workload.GuestAccessException.Reason;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.retry.Retry;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.io.IOException;
import java.lang.reflect.Type;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * A client for one guest cluster, built from one version ({@code secretVersion}) of its kubeconfig
 * Secret. Every call goes through a retry (transient errors) inside the cluster's circuit breaker,
 * so a dead guest API fails fast instead of holding workers. Each request has a total time bound
 * (the HTTP client's call timeout), and a client {@linkplain #until bound to a VMI's deadline}
 * ({@link Deadline#NONE}: none) never lets one run past it.
 */
public record GuestClient(
    GuestClusterRef cluster,
    ApiClient apiClient,
    String secretVersion,
    CircuitBreaker circuitBreaker,
    Throttle throttle,
    Deadline deadline)
    implements AutoCloseable {

  /** This client, its requests also ending within {@code timeLeft} (the VMI's deadline). */
  public GuestClient until(Duration timeLeft) {
    Deadline d = Deadline.after(timeLeft);
    return new GuestClient(cluster, apiClient, secretVersion, circuitBreaker, throttle, d);
  }

  public CoreV1Api core() {
    return new CoreV1Api(apiClient);
  }

  /** One guest API call with retry inside the circuit breaker, failures as {@link #mapped}. */
  public <T> T call(String what, Callable<T> call) throws ApiException, GuestAccessException {
    return mapped(what, Retry.decorateCallable(GuestClients.RETRY, () -> guarded(what, call)));
  }

  /** A drain step (it retries and times out on its own) inside the circuit breaker. */
  public <T> T guardedStep(String what, Callable<T> op) throws ApiException, GuestAccessException {
    return mapped(what, () -> guarded(what, op));
  }

  /**
   * A guest call's failure as the reconciler sees it: 401/403, a rejected certificate and transient
   * failures as a {@link GuestAccessException}; other API answers (404, 409, 422) as thrown.
   */
  private <T> T mapped(String what, Callable<T> op) throws ApiException, GuestAccessException {
    try {
      return op.call();
    } catch (ApiException e) {
      if (e.getCode() == 401 || e.getCode() == 403) {
        throw error(Reason.GuestAPIForbidden, what + " denied (" + RawApi.describeRefusal(e) + ")");
      }
      if (!isCertificateRejected(e) && !isTransient(e)) {
        throw e;
      }
      throw failed(what, e);
    } catch (GuestAccessException e) {
      throw e;
    } catch (Exception e) {
      throw failed(what, e);
    }
  }

  /**
   * Sends one request ({@code buildCall(null)}) as {@link #call(String, Callable)}, each attempt
   * ending by this client's deadline; {@code returnType} null: the answer is ignored.
   */
  public <T> T call(String what, Callable<okhttp3.Call> request, Type returnType)
      throws ApiException, GuestAccessException {
    if (deadline.passed()) {
      throw error(Reason.GuestAPIUnavailable, "no time left before the VMI's deadline for " + what);
    }
    return call(
        what,
        () -> {
          okhttp3.Call call = request.call();
          RawApi.bound(call, deadline);
          return apiClient.<T>execute(call, returnType).getData();
        });
  }

  /** Runs {@code op} inside the circuit breaker, once, its failures as thrown. */
  public <T> T guarded(String what, Callable<T> op) throws Exception {
    try {
      return circuitBreaker.executeCallable(op);
    } catch (CallNotPermittedException e) {
      throw error(
          Reason.GuestAPIUnavailable,
          "API server failing, calls paused (circuit open) while " + what);
    }
  }

  /** A guest call that got no API answer: a rejected certificate, else the API is unavailable. */
  private GuestAccessException failed(String what, Exception e) {
    String described = RawApi.describeWithoutServerText(e, apiClient.getBasePath());
    if (isCertificateRejected(e)) {
      return error(
          Reason.GuestAPICertificateRejected,
          ("%s refused: the API server's TLS certificate does not match the kubeconfig's"
                  + " certificate-authority-data or server (%s)")
              .formatted(what, described));
    }
    return error(Reason.GuestAPIUnavailable, what + " failed: " + described);
  }

  public GuestAccessException error(Reason reason, String text) {
    return new GuestAccessException(reason, "guest cluster " + cluster + ": " + text);
  }

  /**
   * Retried and counted against the breaker: no answer, or a transient one (429, 5xx). Not a
   * rejected certificate: it will be presented again.
   */
  static boolean isTransient(Throwable t) {
    if (isCertificateRejected(t)) {
      return false;
    }
    for (Throwable c : Throwables.getCausalChain(t)) {
      if (c instanceof ApiException e) {
        return RawApi.meaning(e, false) == RawApi.Meaning.TRANSIENT;
      }
      if (c instanceof IOException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The TLS handshake failed on the server's certificate: not signed by the kubeconfig's CA (a
   * {@link CertificateException} below the handshake failure), or not naming the server (OkHttp's
   * {@link SSLPeerUnverifiedException}). Other handshake failures (the peer closing the connection
   * mid-handshake, as a restarting server does) stay transient.
   */
  static boolean isCertificateRejected(Throwable t) {
    return Throwables.getCausalChain(t).stream()
        .anyMatch(
            c -> c instanceof CertificateException || c instanceof SSLPeerUnverifiedException);
  }

  /**
   * Admits reconcile steps to one guest cluster without ever making a worker wait: a token bucket
   * (client-side rate limit, as client-go's QPS and burst) and a bound on steps talking to the
   * cluster at once. A step that is not admitted is told when to come back, and its worker moves on
   * to other tenants' work; so a tenant whose API server is slow holds at most {@code maxInFlight}
   * workers, and a busy tenant cannot use up another's share. One per cluster, shared by its
   * clients.
   *
   * <p>A step takes one token to enter and pays for the rest of its requests when it leaves (it
   * cannot know beforehand how many pods are due), so the bucket may run into debt that later steps
   * wait out.
   */
  public static final class Throttle {

    /** How soon a step refused for lack of a free slot looks again. */
    static final Duration BUSY_RETRY = Duration.ofMillis(250);

    public record Limits(double qps, int burst, int maxInFlight) {
      public Limits {
        if (!(qps > 0) || burst < 1 || maxInFlight < 1) {
          throw new IllegalArgumentException(
              "need qps > 0, burst >= 1 and maxInFlight >= 1, got %s, %d, %d"
                  .formatted(qps, burst, maxInFlight));
        }
      }
    }

    private final Limits limits;
    private final LongSupplier nanoTime;
    private double tokens;
    private long refilledAt;
    private int inFlight;

    public Throttle(Limits limits) {
      this(limits, System::nanoTime);
    }

    Throttle(Limits limits, LongSupplier nanoTime) {
      this.limits = limits;
      this.nanoTime = nanoTime;
      this.tokens = limits.burst();
      this.refilledAt = nanoTime.getAsLong();
    }

    /**
     * Lets a step in (empty: then {@link #leave} must follow), or says when to come back; a step
     * that can finish a drain now (its guest node's pods just left: the tenant's API server is
     * answering) is always let in, and pays for its requests like any.
     */
    public synchronized Optional<Duration> tryEnter(boolean finishing) {
      refill();
      if (!finishing && inFlight >= limits.maxInFlight()) {
        return Optional.of(BUSY_RETRY);
      }
      if (!finishing && tokens < 1) {
        long nanos = (long) Math.ceil((1 - tokens) / limits.qps() * 1e9);
        return Optional.of(Duration.ofNanos(Math.max(nanos, 1_000_000)));
      }
      tokens -= 1;
      inFlight++;
      return Optional.empty();
    }

    /** The step is over, after {@code requests} requests (the one paid on entry included). */
    public synchronized void leave(int requests) {
      inFlight = Math.max(0, inFlight - 1);
      refill();
      tokens -= Math.max(0, requests - 1);
    }

    private void refill() {
      long now = nanoTime.getAsLong();
      tokens = Math.min(limits.burst(), tokens + (now - refilledAt) / 1e9 * limits.qps());
      refilledAt = now;
    }
  }

  @Override
  public void close() {
    // Only idle connections are dropped: a worker may still be using this client.
    apiClient.getHttpClient().connectionPool().evictAll();
  }
}
