package dev.capk.vmieviction.drain;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import java.util.Map;

/**
 * Patches applied the way kube-apiserver applies them, enough for Nodes and NodeMaintenance status:
 * JSON Patch (RFC 6902 {@code test}, {@code add}, {@code remove}, with the server's json-patch
 * library's rules: a {@code test} of null passes on a missing member, a path under a missing parent
 * does not apply) and JSON merge patch (RFC 7386). A Node comes back as the server stores it: an
 * empty taint list, annotation map or a false unschedulable is omitted (omitempty).
 */
public final class ServerPatches {
  private ServerPatches() {}

  /** kube-apiserver's answer to a JSON Patch that does not apply (422, its generic message). */
  public static ApiException notApplied() {
    return new ApiException(
        "",
        422,
        Map.of(),
        "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":"
            + "\"the server rejected our request due to an error in our request\","
            + "\"reason\":\"Invalid\",\"code\":422}");
  }

  public static JsonObject jsonPatch(JsonObject target, String patch) throws ApiException {
    JsonObject doc = omitEmpty(target.deepCopy());
    for (JsonElement e : JsonParser.parseString(patch).getAsJsonArray()) {
      JsonObject op = e.getAsJsonObject();
      String path = op.get("path").getAsString();
      int slash = path.lastIndexOf('/');
      JsonElement parent = at(doc, path.substring(0, slash));
      String key = path.substring(slash + 1).replace("~1", "/").replace("~0", "~");
      if (parent == null || !(parent.isJsonObject() || parent.isJsonArray())) {
        throw notApplied();
      }
      JsonElement value = op.get("value");
      JsonElement current = child(parent, key);
      switch (op.get("op").getAsString()) {
        case "test" -> {
          boolean nullValue = value == null || value.isJsonNull();
          if (current == null ? !nullValue || parent.isJsonArray() : !current.equals(value)) {
            throw notApplied();
          }
        }
        case "add" -> {
          if (parent.isJsonObject()) {
            parent.getAsJsonObject().add(key, value.deepCopy());
          } else if (key.equals("-")) {
            parent.getAsJsonArray().add(value.deepCopy());
          } else {
            insert(parent.getAsJsonArray(), Integer.parseInt(key), value.deepCopy());
          }
        }
        case "remove" -> {
          if (current == null) {
            throw notApplied();
          }
          if (parent.isJsonObject()) {
            parent.getAsJsonObject().remove(key);
          } else {
            parent.getAsJsonArray().remove(Integer.parseInt(key));
          }
        }
        default -> throw new IllegalArgumentException(op.toString());
      }
    }
    return omitEmpty(doc);
  }

  /** Applies a merge patch (RFC 7386). */
  public static JsonObject mergePatch(JsonObject target, String patch) {
    return merge(target.deepCopy(), JsonParser.parseString(patch).getAsJsonObject());
  }

  private static JsonObject merge(JsonObject target, JsonObject patch) {
    for (var e : patch.entrySet()) {
      JsonElement v = e.getValue();
      JsonElement t = target.get(e.getKey());
      if (v.isJsonNull()) {
        target.remove(e.getKey());
      } else if (v.isJsonObject()) {
        JsonObject base = t != null && t.isJsonObject() ? t.getAsJsonObject() : new JsonObject();
        target.add(e.getKey(), merge(base, v.getAsJsonObject()));
      } else {
        target.add(e.getKey(), v.deepCopy());
      }
    }
    return target;
  }

  private static JsonElement at(JsonObject doc, String pointer) {
    JsonElement cur = doc;
    for (String part : pointer.isEmpty() ? new String[0] : pointer.substring(1).split("/")) {
      if (cur == null) {
        return null;
      }
      cur = child(cur, part.replace("~1", "/").replace("~0", "~"));
    }
    return cur;
  }

  private static JsonElement child(JsonElement parent, String key) {
    if (parent.isJsonObject()) {
      return parent.getAsJsonObject().get(key);
    }
    if (parent.isJsonArray() && key.matches("\\d+")) {
      JsonArray a = parent.getAsJsonArray();
      int i = Integer.parseInt(key);
      return i < a.size() ? a.get(i) : null;
    }
    return null;
  }

  private static void insert(JsonArray a, int index, JsonElement value) {
    JsonArray copy = new JsonArray();
    for (int i = 0; i < a.size(); i++) {
      if (i == index) {
        copy.add(value);
      }
      copy.add(a.get(i));
    }
    if (index == a.size()) {
      copy.add(value);
    }
    while (!a.isEmpty()) {
      a.remove(0);
    }
    a.addAll(copy);
  }

  private static JsonObject omitEmpty(JsonObject node) {
    JsonObject meta = node.getAsJsonObject("metadata");
    if (meta != null && meta.has("annotations") && meta.getAsJsonObject("annotations").isEmpty()) {
      meta.remove("annotations");
    }
    JsonObject spec = node.getAsJsonObject("spec");
    if (spec != null) {
      if (spec.has("taints") && spec.getAsJsonArray("taints").isEmpty()) {
        spec.remove("taints");
      }
      if (spec.has("unschedulable") && !spec.get("unschedulable").getAsBoolean()) {
        spec.remove("unschedulable");
      }
    }
    return node;
  }
}
