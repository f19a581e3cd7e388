package dev.capk.vmieviction.training;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The recording the training jar carries: an evacuation under a budget, from start-up to the
 * uncordon, and no credential in it (a recording is committed and shipped in a build stage).
 */
class RecordedEvacuationTest {
  private static Recording recording() throws IOException {
    try (InputStream in = Recording.class.getResourceAsStream("/" + Recording.RESOURCE)) {
      return Recording.read(in);
    }
  }

  @Test
  void itHoldsNoCredential() throws IOException {
    String text;
    try (InputStream in = Recording.class.getResourceAsStream("/" + Recording.RESOURCE)) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    for (String credential :
        List.of(
            "PRIVATE KEY",
            "LS0tLS1CRUdJTiBQUklWQVRF", // base64 of "-----BEGIN PRIVATE"
            "LS0tLS1CRUdJTiBFQyBQUklWQVRF", // base64 of "-----BEGIN EC PRIVATE"
            "client-key-data",
            "\\\"token\\\":")) {
      assertFalse(text.contains(credential), "the recording holds " + credential);
    }
    List<String> secrets = new ArrayList<>();
    Recording r = recording();
    r.exchanges.forEach(e -> secrets.add(e.body()));
    r.lines.values().forEach(ls -> ls.forEach(l -> secrets.add(l.text())));
    for (String body : secrets) {
      assertTrue(SecretData.scrub(body).equals(body), "a Secret's data was recorded: " + body);
    }
  }

  @Test
  void itIsAnEvacuationUnderABudgetFromStartUpToTheUncordon() throws IOException {
    List<String> keys = new ArrayList<>();
    boolean refused = false;
    for (Recording.Exchange e : recording().exchanges) {
      keys.add(e.target() + " " + e.key());
      refused |= e.key().endsWith("/eviction") && e.status() == 429;
    }
    assertTrue(refused, "an eviction refused by the budget (429)");
    assertTrue(
        keys.stream()
            .anyMatch(
                k -> k.matches("infra GET /apis/kubevirt.io/v1/virtualmachineinstances\\?.*")));
    assertTrue(
        keys.stream()
            .anyMatch(
                k ->
                    k.matches(
                        "infra DELETE /apis/kubevirt.io/v1/namespaces/.*/virtualmachineinstances/.*")));
    assertTrue(
        keys.stream()
            .anyMatch(k -> k.matches("guest:.* POST /api/v1/namespaces/.*/pods/.*/eviction")));
    assertTrue(
        keys.stream().filter(k -> k.matches("guest:.* PATCH /api/v1/nodes/.*")).count() >= 2,
        "a cordon and an uncordon");
  }
}
