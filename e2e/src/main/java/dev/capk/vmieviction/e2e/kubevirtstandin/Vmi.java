package dev.capk.vmieviction.e2e.kubevirtstandin;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.Optional;

/**
 * Read access to the few fields of a VirtualMachineInstance (or VirtualMachine) the stand-in needs.
 */
final class Vmi {
  private Vmi() {}

  static Optional<String> string(JsonObject object, String... path) {
    JsonElement e = object;
    for (String key : path) {
      if (e == null || !e.isJsonObject()) {
        return Optional.empty();
      }
      e = e.getAsJsonObject().get(key);
    }
    return e == null || !e.isJsonPrimitive() ? Optional.empty() : Optional.of(e.getAsString());
  }

  static Optional<JsonObject> object(JsonObject object, String... path) {
    JsonElement e = object;
    for (String key : path) {
      if (e == null || !e.isJsonObject()) {
        return Optional.empty();
      }
      e = e.getAsJsonObject().get(key);
    }
    return e != null && e.isJsonObject() ? Optional.of(e.getAsJsonObject()) : Optional.empty();
  }

  /** KubeVirt's rule: the VMI's own strategy, else the cluster-wide one, else None. */
  static String effectiveEvictionStrategy(JsonObject vmi, Optional<String> clusterDefault) {
    return string(vmi, "spec", "evictionStrategy").or(() -> clusterDefault).orElse("None");
  }
}
