package dev.capk.vmieviction.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.kube.Samples;
import dev.capk.vmieviction.time.Deadline;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.EOFException;
import java.io.IOException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.junit.jupiter.api.Test;

/**
 * Retry and circuit breaker around guest calls; the calls are lambdas, nothing goes on the network.
 */
class GuestClientResilienceTest {
  /** The flags' defaults: kubectl's client limits (QPS 50, burst 300), four steps at once. */
  static final GuestClient.Throttle.Limits LIMITS = new GuestClient.Throttle.Limits(50, 300, 4);

  static final GuestClients.Settings SETTINGS =
      new GuestClients.Settings(Duration.ofMinutes(1), false, LIMITS);

  static GuestClient client() {
    GuestClusterRef ref = new GuestClusterRef("ns", "c");
    return new GuestClient(
        ref,
        new ApiClient(),
        "uid/1",
        CircuitBreaker.of("ns/c", GuestClients.BREAKER),
        new GuestClient.Throttle(LIMITS),
        Deadline.NONE);
  }

  @Test
  void transientFailuresAreRetriedThenReportedAsGuestApiUnavailable() {
    GuestClient c = client();
    AtomicInteger calls = new AtomicInteger();
    GuestAccessException e =
        assertThrows(
            GuestAccessException.class,
            () ->
                c.call(
                    "reading node n",
                    () -> {
                      calls.incrementAndGet();
                      throw new ApiException(new IOException("connection refused"));
                    }));
    assertEquals(GuestClients.RETRY_ATTEMPTS, calls.get());
    assertEquals(GuestAccessException.Reason.GuestAPIUnavailable, e.reason());
  }

  @Test
  void aTransientFailureFollowedBySuccessIsInvisible() throws Exception {
    GuestClient c = client();
    AtomicInteger calls = new AtomicInteger();
    String r =
        c.call(
            "x",
            () -> {
              if (calls.incrementAndGet() == 1) {
                throw new ApiException(503, "unavailable");
              }
              return "ok";
            });
    assertEquals("ok", r);
    assertEquals(2, calls.get());
  }

  @Test
  void definiteAnswersAreNotRetriedAndComeBackAsTheyAre() {
    GuestClient c = client();
    AtomicInteger calls = new AtomicInteger();
    ApiException e =
        assertThrows(
            ApiException.class,
            () ->
                c.call(
                    "x",
                    () -> {
                      calls.incrementAndGet();
                      throw new ApiException(404, "not found");
                    }));
    assertEquals(404, e.getCode());
    assertEquals(1, calls.get());
  }

  @Test
  void unauthorizedAndForbiddenBecomeASpecificReasonWithoutRetry() {
    for (int code : new int[] {401, 403}) {
      AtomicInteger calls = new AtomicInteger();
      GuestAccessException e =
          assertThrows(
              GuestAccessException.class,
              () ->
                  client()
                      .call(
                          "x",
                          () -> {
                            calls.incrementAndGet();
                            throw new ApiException(code, "forbidden");
                          }));
      assertEquals(GuestAccessException.Reason.GuestAPIForbidden, e.reason(), "HTTP " + code);
      assertEquals(1, calls.get(), "HTTP " + code);
    }
  }

  @Test
  void aDeadGuestApiOpensTheCircuitAndLaterCallsFailWithoutTrying() {
    GuestClient c = client();
    AtomicInteger calls = new AtomicInteger();
    for (int i = 0; i < 3; i++) { // the breaker judges from 5 calls on
      assertThrows(
          GuestAccessException.class,
          () ->
              c.call(
                  "x",
                  () -> {
                    calls.incrementAndGet();
                    throw new ApiException(0, "no response");
                  }));
    }
    int before = calls.get();
    GuestAccessException e =
        assertThrows(
            GuestAccessException.class,
            () ->
                c.call(
                    "x",
                    () -> {
                      calls.incrementAndGet();
                      return "never";
                    }));
    assertEquals(before, calls.get(), "no call while the circuit is open");
    assertEquals(GuestAccessException.Reason.GuestAPIUnavailable, e.reason());
  }

  static ApiException handshakeFailure(Throwable cause) {
    SSLHandshakeException h = new SSLHandshakeException("PKIX path building failed");
    if (cause != null) {
      h.initCause(cause);
    }
    return new ApiException(h);
  }

  @Test
  void aServerCertificateTheKubeconfigsCaDidNotSignIsRefusedAtOnceWithItsOwnReason() {
    GuestClient c = client();
    AtomicInteger calls = new AtomicInteger();
    GuestAccessException e =
        assertThrows(
            GuestAccessException.class,
            () ->
                c.call(
                    "reading node n",
                    () -> {
                      calls.incrementAndGet();
                      throw handshakeFailure(
                          new CertificateException("unable to find valid certification path"));
                    }));
    assertEquals(GuestAccessException.Reason.GuestAPICertificateRejected, e.reason());
    assertEquals(1, calls.get(), "not retried: the same certificate would come back");
    assertTrue(e.getMessage().contains("certificate"), e.getMessage());
  }

  @Test
  void aServerCertificateNotNamingTheServerIsRefused() {
    GuestAccessException e =
        assertThrows(
            GuestAccessException.class,
            () ->
                client()
                    .call(
                        "x",
                        () -> {
                          throw new ApiException(
                              new SSLPeerUnverifiedException("Hostname 127.0.0.1 not verified"));
                        }));
    assertEquals(GuestAccessException.Reason.GuestAPICertificateRejected, e.reason());
  }

  @Test
  void aHandshakeCutShortByTheServerStaysTransient() {
    GuestClient c = client();
    AtomicInteger calls = new AtomicInteger();
    GuestAccessException e =
        assertThrows(
            GuestAccessException.class,
            () ->
                c.call(
                    "x",
                    () -> {
                      calls.incrementAndGet();
                      throw handshakeFailure(new EOFException("SSL peer shut down incorrectly"));
                    }));
    assertEquals(GuestAccessException.Reason.GuestAPIUnavailable, e.reason());
    assertEquals(GuestClients.RETRY_ATTEMPTS, calls.get());
  }

  @Test
  void anOpenedCircuitIsCountedAndShownInTheMetrics() {
    PrometheusRegistry registry = new PrometheusRegistry();
    GuestClients clients =
        new GuestClients(
            new ApiClient(),
            "v1beta1",
            (ns, name) -> Optional.empty(),
            (ns, name) -> Optional.empty(),
            SETTINGS,
            registry);
    CircuitBreaker breaker = clients.breaker(new GuestClusterRef("ns", "c"));
    assertEquals(0.0, Samples.value(registry, "vmi_eviction_guest_circuits_open"));
    breaker.transitionToOpenState();
    assertEquals(1.0, Samples.value(registry, "vmi_eviction_guest_circuit_opened_total"));
    assertEquals(1.0, Samples.value(registry, "vmi_eviction_guest_circuits_open"));
    breaker.transitionToHalfOpenState();
    assertEquals(0.0, Samples.value(registry, "vmi_eviction_guest_circuits_open"));
    assertEquals(1.0, Samples.value(registry, "vmi_eviction_guest_circuit_opened_total"));
  }

  @Test
  void aClientBoundToAPassedVmiDeadlineSendsNothingAndSaysWhy() {
    GuestClient c = client().until(Duration.ZERO);
    AtomicInteger built = new AtomicInteger();
    GuestAccessException e =
        assertThrows(
            GuestAccessException.class,
            () ->
                c.call(
                    "reading node n",
                    () -> {
                      built.incrementAndGet();
                      throw new AssertionError("no request may be built past the deadline");
                    },
                    null));
    assertEquals(GuestAccessException.Reason.GuestAPIUnavailable, e.reason());
    assertEquals(0, built.get());
    assertTrue(e.getMessage().contains("deadline"), e.getMessage());
  }

  @Test
  void theCallTimeoutBoundsTheWholeRequestAndDerivesFromConnectAndReadTimeouts() {
    assertEquals(
        GuestClients.CONNECT_TIMEOUT.plus(GuestClients.READ_TIMEOUT), GuestClients.CALL_TIMEOUT);
    assertTrue(
        GuestClients.CALL_TIMEOUT.compareTo(Duration.ofSeconds(10)) <= 0,
        "a few seconds: " + GuestClients.CALL_TIMEOUT);
  }
}
