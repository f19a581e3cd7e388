package dev.capk.vmieviction.maintenance;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.models.V1Taint;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A node taint, written {@code key[=value]:Effect} as in {@code kubectl taint}. Two taints are the
 * same taint when key and effect match (the API server's own rule; the value does not count).
 */
public record Taint(String key, String value, String effect) {

  /** The node lifecycle controller keeps it on cordoned nodes. */
  public static final Taint UNSCHEDULABLE =
      new Taint("node.kubernetes.io/unschedulable", null, "NoSchedule");

  /** The Node Maintenance Operator's drain taint. */
  public static final Taint MEDIK8S_DRAIN = new Taint("medik8s.io/drain", null, "NoSchedule");

  /** The taint older KubeVirt releases look for on nodes being drained. */
  public static final Taint KUBEVIRT_DRAIN = new Taint("kubevirt.io/drain", null, "NoSchedule");

  /** Plain Gson for our own records: the taints and the mark we write on nodes. */
  static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

  private static final Set<String> EFFECTS = Set.of("NoSchedule", "PreferNoSchedule", "NoExecute");
  private static final String NAME = "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?";

  /** A qualified name: an optional DNS subdomain prefix and a slash, then a name. */
  private static final Pattern KEY =
      Pattern.compile("([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?" + NAME);

  private static final Pattern VALUE = Pattern.compile("(" + NAME + ")?");

  public Taint {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(effect, "effect");
    value = value == null || value.isEmpty() ? null : value;
  }

  /** Parses {@code key[=value]:Effect}; an IllegalArgumentException names what is wrong. */
  public static Taint parse(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("a taint must be key[=value]:Effect, got nothing");
    }
    String t = text.strip();
    int colon = t.lastIndexOf(':');
    if (colon <= 0 || colon == t.length() - 1) {
      throw new IllegalArgumentException("a taint must be key[=value]:Effect, got \"" + t + "\"");
    }
    String effect = t.substring(colon + 1);
    if (!EFFECTS.contains(effect)) {
      throw bad("taint effect must be NoSchedule, PreferNoSchedule or NoExecute", effect, t);
    }
    String kv = t.substring(0, colon);
    int eq = kv.indexOf('=');
    String key = eq < 0 ? kv : kv.substring(0, eq);
    String value = eq < 0 ? null : kv.substring(eq + 1);
    if (!KEY.matcher(key).matches()) {
      throw bad("taint key must be a qualified name ([prefix/]name)", key, t);
    }
    if (value != null && !VALUE.matcher(value).matches()) {
      throw bad("taint value must be a label value (at most 63 characters)", value, t);
    }
    return new Taint(key, value, effect);
  }

  private static IllegalArgumentException bad(String rule, String part, String taint) {
    return new IllegalArgumentException(rule + ", got \"" + part + "\" in \"" + taint + "\"");
  }

  /** True when the node's taint has this key and effect. */
  public boolean sameAs(V1Taint nodeTaint) {
    return nodeTaint != null
        && key.equals(nodeTaint.getKey())
        && effect.equals(nodeTaint.getEffect());
  }

  public boolean sameAs(Taint other) {
    return other != null && key.equals(other.key) && effect.equals(other.effect);
  }

  /** The taint as the Node API writes it (no value: none written). */
  public JsonObject toJson() {
    return GSON.toJsonTree(this).getAsJsonObject();
  }

  @Override
  public String toString() {
    return key + (value == null ? "" : "=" + value) + ":" + effect;
  }
}
