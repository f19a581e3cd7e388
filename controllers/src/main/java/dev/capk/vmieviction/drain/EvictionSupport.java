package dev.capk.vmieviction.drain;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.util.Optional;

/**
 * Asks the API server, once per drain, whether it serves the pods/eviction subresource and in which
 * group/version, as kubectl does from discovery. A server without it gets deletions instead.
 */
final class EvictionSupport {
  private final RawApi api;

  EvictionSupport(RawApi api) {
    this.api = api;
  }

  /** The Eviction group/version ("policy/v1"), or empty when evictions are not served. */
  Optional<String> discover() throws ApiException {
    RawApi.Answer answer =
        api.execute(new CoreV1Api(api.client()).getAPIResources().buildCall(null));
    if (!answer.ok()) {
      throw answer.toException();
    }
    return parse(answer.body());
  }

  static Optional<String> parse(String apiResourceListJson) {
    JsonObject list = JsonParser.parseString(apiResourceListJson).getAsJsonObject();
    JsonElement resources = list.get("resources");
    if (resources == null || !resources.isJsonArray()) {
      return Optional.empty();
    }
    for (JsonElement e : resources.getAsJsonArray()) {
      JsonObject r = e.getAsJsonObject();
      if ("pods/eviction".equals(text(r, "name"))
          && "Eviction".equals(text(r, "kind"))
          && !text(r, "group").isEmpty()
          && !text(r, "version").isEmpty()) {
        return Optional.of(text(r, "group") + "/" + text(r, "version"));
      }
    }
    return Optional.empty();
  }

  private static String text(JsonObject o, String key) {
    JsonElement e = o.get(key);
    return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
  }
}
