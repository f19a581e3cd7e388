package dev.capk.vmieviction.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class SecretDataTest {
  private static final String KEY = b64("-----BEGIN PRIVATE KEY-----secret");

  @Test
  void aSecretsDataIsBlankedButAnInfraSecretsNamespace() {
    String secret =
        "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"c-kubeconfig\",\"namespace\":\"t\"},"
            + "\"data\":{\"value\":\""
            + KEY
            + "\",\"namespace\":\""
            + b64("tenant-ns")
            + "\"}}";
    String scrubbed = SecretData.scrub(secret);
    assertFalse(scrubbed.contains(KEY), scrubbed);
    JsonObject data = JsonParser.parseString(scrubbed).getAsJsonObject().getAsJsonObject("data");
    assertEquals(SecretData.BLANK, data.get("value").getAsString());
    assertEquals(b64("tenant-ns"), data.get("namespace").getAsString());
  }

  @Test
  void aSecretListsItemsWhichCarryNoKindAndAWatchEventsSecretAreBlanked() {
    String list =
        "{\"kind\":\"SecretList\",\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"t\"},"
            + "\"data\":{\"value\":\""
            + KEY
            + "\"}}]}";
    String event =
        "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\","
            + "\"namespace\":\"t\"},\"data\":{\"token\":\""
            + KEY
            + "\"}}}";
    assertFalse(SecretData.scrub(list).contains(KEY));
    assertFalse(SecretData.scrub(event).contains(KEY));
  }

  @Test
  void jsonWithoutASecretComesBackAsItCame() {
    String pod = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"Secret\"},\"data\":{\"value\":\"x\"}}";
    assertSame(pod, SecretData.scrub(pod));
    String notJson = "Secret: not json";
    assertSame(notJson, SecretData.scrub(notJson));
  }

  @Test
  void aReplayPutsItsOwnKubeconfigWhereABlankedKubeconfigWasAndNowhereElse() {
    String recorded =
        SecretData.scrub(
            "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"c-kubeconfig\",\"namespace\":\"t\"},"
                + "\"data\":{\"value\":\""
                + KEY
                + "\",\"other\":\""
                + KEY
                + "\"}}");
    String filled = SecretData.fill(recorded, secret -> "kubeconfig of " + secret);
    JsonObject data = JsonParser.parseString(filled).getAsJsonObject().getAsJsonObject("data");
    assertEquals(b64("kubeconfig of t/c-kubeconfig"), data.get("value").getAsString());
    assertEquals(SecretData.BLANK, data.get("other").getAsString());
    assertTrue(filled.contains("\"c-kubeconfig\""));
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }
}
