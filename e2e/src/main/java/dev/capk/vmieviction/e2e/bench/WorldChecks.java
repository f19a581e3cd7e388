package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.capk.vmieviction.api.EvictionAnnotations;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What the benchmarks' worlds check before and after a run, read from the API servers: the VMIs
 * back on an infra node, the guest nodes schedulable again, the guest pods running.
 */
final class WorldChecks {
  private WorldChecks() {}

  /**
   * How many VMIs of {@code namespace} run on {@code node}, unmarked and not being deleted, each
   * with another UID than the one {@code previous} names for it ("namespace/name" to UID), if any.
   */
  static int vmisRunningOn(
      RawKube infra, String namespace, String node, Map<String, String> previous) throws Exception {
    int ok = 0;
    for (JsonElement e :
        infra
            .getJson("/apis/kubevirt.io/v1/namespaces/" + namespace + "/virtualmachineinstances")
            .getAsJsonArray("items")) {
      JsonObject vmi = e.getAsJsonObject();
      String key = namespace + "/" + RawKube.str(vmi, "metadata", "name");
      String evac = RawKube.str(vmi, "status", "evacuationNodeName");
      if ("Running".equals(RawKube.str(vmi, "status", "phase"))
          && node.equals(RawKube.str(vmi, "status", "nodeName"))
          && RawKube.str(vmi, "metadata", "deletionTimestamp") == null
          && (evac == null || evac.isEmpty())
          && !RawKube.str(vmi, "metadata", "uid").equals(previous.get(key))) {
        ok++;
      }
    }
    return ok;
  }

  /** Whether every one of {@code nodes} is schedulable and carries no cordon mark of ours. */
  static boolean schedulable(RawKube guest, List<String> nodes) throws Exception {
    for (String name : nodes) {
      JsonObject n = guest.getJson("/api/v1/nodes/" + name);
      JsonObject spec = n.getAsJsonObject("spec");
      JsonObject ann = n.getAsJsonObject("metadata").getAsJsonObject("annotations");
      if ((spec != null && spec.has("unschedulable") && spec.get("unschedulable").getAsBoolean())
          || (ann != null && ann.has(EvictionAnnotations.CORDONED_BY))) {
        return false;
      }
    }
    return true;
  }

  /** The Running pods of {@code namespace} not being deleted, counted by {@code key}. */
  static Map<String, Integer> runningPods(
      RawKube guest, String namespace, Function<JsonObject, String> key) throws Exception {
    Map<String, Integer> running = new HashMap<>();
    for (JsonElement e :
        guest
            .getJson(
                "/api/v1/namespaces/" + namespace + "/pods?fieldSelector=status.phase%3DRunning")
            .getAsJsonArray("items")) {
      JsonObject p = e.getAsJsonObject();
      if (RawKube.str(p, "metadata", "deletionTimestamp") == null) {
        running.merge(key.apply(p), 1, Integer::sum);
      }
    }
    return running;
  }

  /** Whether {@code counts} holds exactly {@code n} for every one of {@code keys}. */
  static boolean eachHas(Map<String, Integer> counts, List<String> keys, int n) {
    return keys.stream().allMatch(k -> counts.getOrDefault(k, 0) == n);
  }

  /** The key of {@link #runningPods} that counts pods by the node they run on. */
  static String nodeOf(JsonObject pod) {
    return RawKube.str(pod, "spec", "nodeName");
  }
}
