package dev.capk.vmieviction.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The replay over real HTTPS and HTTP/2, as the controller's client meets it. */
@Timeout(value = 60, unit = TimeUnit.SECONDS) // a replay that never answers fails, not hangs
class ReplayHandlerTest {
  private static final String JSON = "application/json";

  private static Recording.Exchange answer(long id, String target, String key, String body) {
    return new Recording.Exchange(id, target, key, 200, JSON, body, false);
  }

  private static Recording recording(
      List<Recording.Exchange> exchanges, Map<Long, List<Recording.Line>> lines) {
    return new Recording(new Recording.Header(Instant.now(), List.of()), exchanges, lines);
  }

  /** The replay of a recording of these answers and no watch. */
  private static ReplayHandler replayOf(Recording.Exchange... answers) {
    return new ReplayHandler(recording(List.of(answers), Map.of()), secret -> "");
  }

  /** A client that trusts {@code server} and speaks HTTP/2 to it. */
  private static HttpClient client(LoopbackServer server) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry(
        "loopback",
        CertificateFactory.getInstance("X.509")
            .generateCertificate(
                new ByteArrayInputStream(
                    server.certificatePem().getBytes(StandardCharsets.US_ASCII))));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(tls).version(HttpClient.Version.HTTP_2).build();
  }

  private static HttpRequest.Builder request(LoopbackServer server, String token, String path) {
    return HttpRequest.newBuilder(URI.create(server.url() + path))
        .header("Authorization", "Bearer " + token);
  }

  @Test
  void theNthRequestOfAKeyGetsTheNthAnswerAndTheLastPastThem() throws Exception {
    ReplayHandler replay =
        replayOf(
            answer(1, "infra", "GET /a", "{\"n\":1}"), answer(2, "infra", "GET /a", "{\"n\":2}"));
    try (LoopbackServer server = new LoopbackServer(replay);
        HttpClient client = client(server)) {
      List<String> bodies = new java.util.ArrayList<>();
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r =
            client.send(
                request(server, "infra", "/a").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(HttpClient.Version.HTTP_2, r.version());
        bodies.add(r.body());
      }
      assertEquals(List.of("{\"n\":1}", "{\"n\":2}", "{\"n\":2}"), bodies);
      // The same key asked by another target was not recorded: a 404 Status, counted.
      HttpResponse<String> other =
          client.send(
              request(server, "guest:t/c", "/a").build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(404, other.statusCode());
      assertTrue(other.body().contains("\"reason\":\"NotFound\""), other.body());
      assertEquals(List.of("guest:t/c GET /a"), replay.notRecorded());
    }
  }

  @Test
  void aWatchLineWaitsForTheRequestThatCameBeforeItInTheRecording() throws Exception {
    Recording r =
        recording(
            List.of(
                new Recording.Exchange(5, "infra", "GET /w?watch=true", 200, JSON, "", true),
                answer(6, "infra", "POST /b", "{}")),
            Map.of(
                5L,
                List.of(
                    new Recording.Line(5, 0, null, 0, "first", false),
                    new Recording.Line(5, 0, "POST /b", 1, "second", false),
                    new Recording.Line(5, 0, "POST /b", 1, "", true))));
    // Never released by its recorded time here: only its trigger can release the second line.
    ReplayHandler replay = new ReplayHandler(r, secret -> "", Duration.ofHours(1));
    try (LoopbackServer server = new LoopbackServer(replay);
        HttpClient client = client(server)) {
      HttpResponse<Stream<String>> watch =
          client.send(
              request(server, "infra", "/w?watch=true&resourceVersion=7").build(),
              HttpResponse.BodyHandlers.ofLines());
      // Each line as the client reads it, with whether the trigger had been sent by then.
      AtomicBoolean posted = new AtomicBoolean();
      List<String> seen = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
      Thread reader =
          Thread.ofVirtual()
              .start(
                  () -> watch.body().forEach(line -> seen.add(line + " posted=" + posted.get())));
      while (seen.isEmpty()) {
        Thread.sleep(10);
      }
      Thread.sleep(300); // room for a wrongly early second line to arrive before the trigger
      posted.set(true);
      client.send(
          request(server, "infra", "/b").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
          HttpResponse.BodyHandlers.ofString());
      reader.join(); // the watch ends where the recording's ended
      assertEquals(List.of("first posted=false", "second posted=true"), seen);
    }
  }

  @Test
  void theReplayIsCompleteOnceEveryRecordedWriteButEventsIsMadeAgain() throws Exception {
    ReplayHandler replay =
        replayOf(
            answer(1, "infra", "DELETE /v", "{}"),
            answer(2, "infra", "POST /api/v1/namespaces/a/events", "{}"),
            answer(3, "infra", "GET /v", "{}"));
    try (LoopbackServer server = new LoopbackServer(replay);
        HttpClient client = client(server)) {
      assertEquals(List.of("infra DELETE /v: 0/1"), replay.writesMissing());
      assertFalse(replay.awaitWrites(Duration.ZERO));
      client.send(
          request(server, "infra", "/v").DELETE().build(), HttpResponse.BodyHandlers.ofString());
      assertTrue(replay.awaitWrites(Duration.ofSeconds(30)));
      assertEquals(List.of(), replay.writesMissing());
    }
  }
}
