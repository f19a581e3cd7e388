package dev.capk.vmieviction.training;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Secrets' data in recorded answers. A recording never holds it: every value but an infra Secret's
 * {@code namespace} is blanked as it is recorded ({@link #scrub}), and a replay puts a kubeconfig
 * of its own where a kubeconfig was ({@link #fill}). Applies to a Secret, a SecretList and a watch
 * event of a Secret; any other JSON is returned as it came.
 */
public final class SecretData {
  /** Keys that are no credential: an infra Secret's namespace. */
  private static final Set<String> KEPT = Set.of("namespace");

  /** Keys whose value is a kubeconfig: a CAPI cluster's {@code value}, an infra Secret's. */
  private static final Set<String> KUBECONFIGS = Set.of("value", "kubeconfig");

  static final String BLANK = base64("recorded without its data");

  private SecretData() {}

  /** {@code json} with the data of every Secret in it blanked. */
  public static String scrub(String json) {
    return edit(json, (secret, key) -> BLANK);
  }

  /**
   * {@code json} with every blanked kubeconfig replaced by {@code kubeconfigs} of its Secret
   * ("namespace/name").
   */
  static String fill(String json, Function<String, String> kubeconfigs) {
    return edit(
        json,
        (secret, key) -> {
          JsonObject data = secret.getAsJsonObject("data");
          if (!KUBECONFIGS.contains(key) || !BLANK.equals(data.get(key).getAsString())) {
            return null;
          }
          JsonObject meta = secret.getAsJsonObject("metadata");
          String name = meta.get("namespace").getAsString() + "/" + meta.get("name").getAsString();
          return base64(kubeconfigs.apply(name));
        });
  }

  /** What a Secret's data key becomes (null: unchanged). */
  private interface Edit {
    String value(JsonObject secret, String key);
  }

  private static String edit(String json, Edit edit) {
    if (!json.contains("Secret")) {
      return json;
    }
    JsonElement parsed;
    try {
      parsed = JsonParser.parseString(json);
    } catch (RuntimeException notJson) {
      return json;
    }
    if (!parsed.isJsonObject()) {
      return json;
    }
    JsonObject o = parsed.getAsJsonObject();
    boolean changed;
    if (o.has("object") && o.has("type") && o.get("object").isJsonObject()) {
      changed = editSecret(o.getAsJsonObject("object"), edit, false);
    } else if ("SecretList".equals(kind(o)) && o.has("items") && o.get("items").isJsonArray()) {
      changed = false;
      for (JsonElement item : o.getAsJsonArray("items")) {
        changed |= item.isJsonObject() && editSecret(item.getAsJsonObject(), edit, true);
      }
    } else {
      changed = editSecret(o, edit, false);
    }
    return changed ? o.toString() : json;
  }

  /** Edits a Secret's data; {@code listed}: an item of a SecretList, which carries no kind. */
  private static boolean editSecret(JsonObject secret, Edit edit, boolean listed) {
    if (!(listed || "Secret".equals(kind(secret)))
        || !secret.has("data")
        || !secret.get("data").isJsonObject()) {
      return false;
    }
    boolean changed = false;
    for (Map.Entry<String, JsonElement> e : secret.getAsJsonObject("data").entrySet()) {
      if (KEPT.contains(e.getKey())) {
        continue;
      }
      String value = edit.value(secret, e.getKey());
      if (value != null && !value.equals(e.getValue().getAsString())) {
        e.setValue(new com.google.gson.JsonPrimitive(value));
        changed = true;
      }
    }
    return changed;
  }

  private static String kind(JsonObject o) {
    return o.has("kind") && o.get("kind").isJsonPrimitive() ? o.get("kind").getAsString() : "";
  }

  private static String base64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }
}
