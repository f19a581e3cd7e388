package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.kubevirt.KubeVirt;
import dev.capk.vmieviction.api.kubevirt.KubeVirtList;
import dev.capk.vmieviction.eviction.ClusterDefaults.Readout;
import dev.capk.vmieviction.eviction.MigrationDecision.MigrationLimits;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The KubeVirt CR read: which answers say "not set" and which say nothing (the server's answers as
 * values decoded from the JSON an API server sends, no server imitated), and what is kept and read
 * again when. The last two tests read from endpoints that are no API server at all.
 */
class KubeVirtClusterDefaultsTest {

  @Test
  void anApiServerThatCannotBeReachedMeansUnknownNotAnException() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort(); // closed again before the call: the connection is refused
    }
    ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + closedPort);
    client.setConnectTimeout(1000);
    ClusterDefaults defaults =
        new ClusterDefaults(client, Duration.ofMinutes(1), Clock.systemUTC());

    assertTrue(
        defaults.evictionStrategy() instanceof Readout.Unreadable<Optional<String>> u
            && u.what().contains("no response"),
        "a refused connection is no answer: " + defaults.evictionStrategy());
  }

  /**
   * Not an imitation of the Kubernetes API: an endpoint that answers every request "200, empty
   * body", as a misconfigured proxy does. The client reports that as a success without an object.
   */
  @Test
  void aSuccessWithoutABodyMeansUnknownNotAnException() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Thread answering =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try (java.net.Socket s = server.accept()) {
                    java.io.BufferedReader in =
                        new java.io.BufferedReader(
                            new java.io.InputStreamReader(
                                s.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII));
                    for (String line = in.readLine();
                        line != null && !line.isEmpty();
                        line = in.readLine()) {
                      // the request's head; it has no body
                    }
                    s.getOutputStream()
                        .write(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                  } catch (java.io.IOException e) {
                    return;
                  }
                }
              },
              "empty-200");
      answering.setDaemon(true);
      answering.start();
      ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + server.getLocalPort());
      ClusterDefaults defaults =
          new ClusterDefaults(client, Duration.ofMinutes(1), Clock.systemUTC());

      assertTrue(
          defaults.evictionStrategy() instanceof Readout.Unreadable<Optional<String>> u
              && u.what().contains("without a list"),
          "a 200 without a body is no answer: " + defaults.evictionStrategy());
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Answers and failures, one list each.

  static final String EXTERNAL =
      """
      {"apiVersion":"kubevirt.io/v1","kind":"KubeVirtList","metadata":{},"items":[
        {"apiVersion":"kubevirt.io/v1","kind":"KubeVirt",
         "metadata":{"name":"kubevirt","namespace":"kubevirt"},
         "spec":{"configuration":{"evictionStrategy":"External",
           "migrations":{"parallelMigrationsPerCluster":3}}}}]}
      """;

  static KubernetesApiResponse<KubeVirtList> list(String json) {
    return new KubernetesApiResponse<>(new JSON().getGson().fromJson(json, KubeVirtList.class));
  }

  /** A failure as the API server sends it: a Status with its code. */
  static KubernetesApiResponse<KubeVirtList> failure(int code, String reason, String message) {
    String json =
        """
        {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s",
         "reason":"%s","code":%d}
        """
            .formatted(message, reason, code);
    return new KubernetesApiResponse<>(new JSON().getGson().fromJson(json, V1Status.class), code);
  }

  static Readout<Optional<String>> strategyOf(KubernetesApiResponse<KubeVirtList> r) {
    return ClusterDefaults.answerOf(r).map(c -> c.map(KubeVirt.Configuration::getEvictionStrategy));
  }

  @Test
  void onlyAnAnswerThatReallySaysNoStrategyIsNotSet() {
    assertEquals(new Readout.Answer<>(Optional.of("External")), strategyOf(list(EXTERNAL)));
    assertEquals(
        new Readout.Answer<>(Optional.empty()),
        strategyOf(failure(404, "NotFound", "the server could not find the requested resource")),
        "no KubeVirt CRD");
    assertEquals(
        new Readout.Answer<>(Optional.empty()),
        strategyOf(
            list("{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"KubeVirtList\",\"items\":[]}")),
        "no KubeVirt CR");
    assertEquals(
        new Readout.Answer<>(Optional.empty()),
        strategyOf(
            list(
                """
                {"kind":"KubeVirtList","items":[{"kind":"KubeVirt",
                 "metadata":{"name":"kubevirt","namespace":"kubevirt"},"spec":{}}]}
                """)),
        "a CR without a configuration");
    assertEquals(
        new Readout.Answer<>(Optional.empty()),
        strategyOf(
            list(
                """
                {"kind":"KubeVirtList","items":[{"kind":"KubeVirt",
                 "metadata":{"name":"kubevirt","namespace":"kubevirt"},
                 "spec":{"configuration":{"developerConfiguration":{}}}}]}
                """)),
        "a CR without evictionStrategy");
  }

  @Test
  void aFailedListIsNoAnswerAndSaysWhatFailed() {
    for (KubernetesApiResponse<KubeVirtList> r :
        List.of(
            failure(429, "TooManyRequests", "Too many requests, please try again later."),
            failure(500, "InternalError", "Internal error occurred: etcd timeout"),
            failure(
                503, "ServiceUnavailable", "the server is currently unable to handle the request"),
            failure(
                403,
                "Forbidden",
                "kubevirts.kubevirt.io is forbidden: User 'system:serviceaccount:x:y' cannot list"),
            failure(401, "Unauthorized", "Unauthorized"))) {
      Readout<Optional<String>> read = strategyOf(r);
      assertTrue(
          read instanceof Readout.Unreadable<Optional<String>> u
              && u.what().contains("HTTP " + r.getHttpStatusCode())
              && u.what().contains(r.getStatus().getMessage().substring(0, 10)),
          "HTTP " + r.getHttpStatusCode() + " is no answer: " + read);
    }
  }

  // -----------------------------------------------------------------------------------------------
  // What is kept, and when the CR is read again.

  static final Duration REFRESH = Duration.ofMinutes(1);

  VmiEvictionReconcilerTest.MutableClock clock =
      new VmiEvictionReconcilerTest.MutableClock(Instant.parse("2025-03-01T12:00:00Z"));
  Deque<KubernetesApiResponse<KubeVirtList>> answers = new ArrayDeque<>();
  int lists;

  ClusterDefaults defaults() {
    return new ClusterDefaults(
        () -> {
          lists++;
          return answers.isEmpty() ? failure(429, "TooManyRequests", "later") : answers.poll();
        },
        REFRESH,
        clock);
  }

  void after(Duration d) {
    clock.now = clock.now.plus(d);
  }

  @Test
  void aFailedFirstReadIsTriedAgainWithBackoffAndItsAnswerCountsAtOnce() {
    ClusterDefaults d = defaults();

    assertTrue(d.evictionStrategy() instanceof Readout.Unreadable);
    assertTrue(d.evictionStrategy() instanceof Readout.Unreadable);
    assertEquals(1, lists, "not read again before the first retry");
    after(ClusterDefaults.FIRST_RETRY);
    assertTrue(d.evictionStrategy() instanceof Readout.Unreadable);
    assertEquals(2, lists);
    after(ClusterDefaults.FIRST_RETRY);
    d.evictionStrategy();
    assertEquals(2, lists, "the second retry waits twice as long");
    after(ClusterDefaults.FIRST_RETRY);
    answers.add(list(EXTERNAL));

    assertEquals(new Readout.Answer<>(Optional.of("External")), d.evictionStrategy());
    assertEquals(new Readout.Answer<>(new MigrationLimits(3, 2)), d.migrationLimits());
    assertEquals(3, lists, "the answer is kept for the refresh interval");
  }

  @Test
  void theBackoffOfFailedReadsStopsAtTheRefreshInterval() {
    ClusterDefaults d = defaults();
    for (int i = 0; i < 12; i++) {
      d.evictionStrategy();
      after(REFRESH);
    }
    assertEquals(12, lists, "one read per refresh interval at most, never fewer");
  }

  @Test
  void aGoodAnswerStaysInUseWhileARefreshFailsAndIsReadAgainAfterTheRefreshInterval() {
    answers.add(list(EXTERNAL));
    ClusterDefaults d = defaults();
    assertEquals(new Readout.Answer<>(Optional.of("External")), d.evictionStrategy());

    after(REFRESH);
    assertEquals(
        new Readout.Answer<>(Optional.of("External")), d.evictionStrategy(), "refresh failed");
    assertEquals(2, lists);
    after(REFRESH.minusSeconds(1));
    d.evictionStrategy();
    assertEquals(2, lists, "a failed refresh is tried again after the same refresh interval");
    after(Duration.ofSeconds(1));
    answers.add(failure(404, "NotFound", "gone"));

    assertEquals(
        new Readout.Answer<>(Optional.empty()),
        d.evictionStrategy(),
        "an answer replaces the last one: the CRD is gone, nothing sets a strategy");
  }
}
