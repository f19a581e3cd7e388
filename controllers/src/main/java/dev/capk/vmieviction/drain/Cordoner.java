package dev.capk.vmieviction.drain;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Taint;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Cordons and uncordons nodes for the CLI and the controllers, with their marks, and builds the ops
 * the NodeMaintenance controller combines into its own patch.
 *
 * <p>Each write is a JSON Patch of exactly those fields, whose {@code test}s of them as read are
 * its precondition: never an update of the whole Node, whose fields our models may not know, and
 * not a resourceVersion guard, which every status heartbeat would fail.
 *
 * <p>Patches are built from what the server holds, not the model's defaults: the server omits an
 * empty annotation map and {@code spec.unschedulable: false} (omitempty), which the model shows as
 * an empty map and false; an {@code add} under a missing parent does not apply.
 */
public final class Cordoner {
  /** Writes in a row that find the node changed in what they depend on, before giving up. */
  public static final int MAX_WRITES = 5;

  private final RawApi api;
  private final CoreV1Api core;

  public Cordoner(RawApi api) {
    this.api = api;
    this.core = new CoreV1Api(api.client());
  }

  /**
   * Sets {@code spec.unschedulable} as kubectl (un)cordons (a client dry run only reads). True if
   * it changed (would change).
   *
   * @throws NodeNotFoundException if there is no such node
   */
  public boolean setUnschedulable(String node, boolean desired, DryRun dryRun) throws ApiException {
    Objects.requireNonNull(node, "node");
    V1Node read = read(node).orElseThrow(() -> new NodeNotFoundException(node));
    Written<String> w =
        write(
            read,
            n ->
                unschedulable(n) == desired
                    ? Optional.empty()
                    : Optional.of(desired ? cordonPatch(n, null, null) : uncordonPatch(n, null)),
            Function.identity(),
            MAX_WRITES,
            (name, patch) -> dryRun == DryRun.CLIENT ? read : patch(name, patch, dryRun),
            this::read);
    switch (w.result()) {
      case GONE -> throw new NodeNotFoundException(node);
      case REFUSED -> throw w.answer();
      case CHANGED ->
          throw new ApiException(
              409, "node " + node + " changed while being written, " + MAX_WRITES + " times");
      default -> {
        return w.change() != null;
      }
    }
  }

  public Optional<V1Node> read(String node) throws ApiException {
    RawApi.Answer answer = api.execute(core.readNode(node).buildCall(null));
    if (answer.code() == 404) {
      return Optional.empty();
    }
    return Optional.of(LenientJson.parse(answer.orThrow().body(), V1Node.class));
  }

  public V1Node patch(String node, String patch, DryRun dryRun) throws ApiException {
    CoreV1Api.APIpatchNodeRequest req = core.patchNode(node, new V1Patch(patch));
    if (dryRun == DryRun.SERVER) {
      req = req.dryRun("All");
    }
    RawApi.Answer answer = api.execute(RawApi.asJsonPatch(api.client(), req.buildCall(null)));
    return LenientJson.parse(answer.orThrow().body(), V1Node.class);
  }

  /** Sends a JSON Patch of a node by the caller's client. */
  @FunctionalInterface
  public interface Send<X extends Exception> {
    V1Node patch(String node, String jsonPatch) throws ApiException, X;
  }

  /** Reads a node by the caller's client; empty: 404. */
  @FunctionalInterface
  public interface Read<X extends Exception> {
    Optional<V1Node> node(String name) throws ApiException, X;
  }

  public enum Result {
    APPLIED,
    /** The node changed in what the patch depends on. */
    CHANGED,
    GONE,
    REFUSED
  }

  /**
   * How a write ended: the change planned (null: nothing to write, or the node is gone), and the
   * node as the patch left it, or as read again after a patch that did not apply.
   */
  public record Written<T>(Result result, T change, V1Node node, ApiException answer) {
    /** What the caller saw of the node is old. */
    public boolean reread() {
      return result != Result.APPLIED && node != null;
    }
  }

  /**
   * Writes the change {@code plan} makes of the node, planned anew from the node read again while
   * it changed in what the patch depends on, up to {@code attempts} times. A patch that did not
   * apply (422, no reason given) is a change only if the patch planned on the node read again
   * differs; else a refusal. Transient answers are thrown.
   */
  public static <T, X extends Exception> Written<T> write(
      V1Node node,
      Function<V1Node, Optional<T>> plan,
      Function<T, String> patchOf,
      int attempts,
      Send<X> send,
      Read<X> read)
      throws ApiException, X {
    String name = node.getMetadata().getName();
    for (int attempt = 1; ; attempt++) {
      Optional<T> change = plan.apply(node);
      if (change.isEmpty()) {
        return new Written<>(Result.APPLIED, null, null, null);
      }
      String patch = patchOf.apply(change.get());
      Optional<V1Node> now = Optional.empty();
      try {
        return new Written<>(Result.APPLIED, change.get(), send.patch(name, patch), null);
      } catch (ApiException e) {
        Result result =
            switch (RawApi.meaning(e, false)) {
              case TRANSIENT -> throw e;
              case CONFLICT -> Result.CHANGED;
              case GONE -> Result.GONE;
              case REFUSED -> Result.REFUSED;
              default -> { // PATCH_NOT_APPLIED
                now = read.node(name);
                yield now.isEmpty()
                    ? Result.GONE
                    : plan.apply(now.get()).map(patchOf).orElse("").equals(patch)
                        ? Result.REFUSED
                        : Result.CHANGED;
              }
            };
        if (result != Result.CHANGED || attempt == attempts) {
          return new Written<>(result, change.get(), now.orElse(null), e);
        }
      }
      if (now.isEmpty() && (now = read.node(name)).isEmpty()) {
        return new Written<>(Result.GONE, null, null, null);
      }
      node = now.get();
    }
  }

  /**
   * Cordon, and mark the cordon with the annotation {@code markKey} = {@code markValue} unless
   * {@code markKey} is null, in one patch that applies only while the node is still (un)schedulable
   * and (un)marked as read.
   */
  public static String cordonPatch(V1Node node, String markKey, String markValue) {
    JsonArray ops = new JsonArray();
    ops.add(testUnschedulable(node));
    if (markKey != null) {
      ops.addAll(addMark(node, markKey, markValue));
    }
    ops.add(op("add", "/spec/unschedulable", new JsonPrimitive(true)));
    return ops.toString();
  }

  /**
   * Uncordon, while the node is still cordoned (never a cordon someone else made since), and remove
   * the mark {@code markKey} unless it is null, while it is the one the node was read with. The
   * field is removed, as kubectl uncordons (unschedulable is omitempty).
   */
  public static String uncordonPatch(V1Node node, String markKey) {
    JsonArray ops = new JsonArray();
    ops.add(op("test", "/spec/unschedulable", new JsonPrimitive(true)));
    if (markKey != null) {
      ops.addAll(removeMark(node, markKey));
    }
    ops.add(op("remove", "/spec/unschedulable", null));
    return ops.toString();
  }

  public static String removeMarkPatch(V1Node node, String markKey) {
    return removeMark(node, markKey).toString();
  }

  /**
   * Ops that make {@code spec.unschedulable} {@code desired} while it is as read; it is tested even
   * when it already is, so a decision taken from it holds when the patch applies.
   */
  public static JsonArray unschedulableOps(V1Node node, boolean desired) {
    JsonArray ops = new JsonArray();
    ops.add(testUnschedulable(node));
    if (unschedulable(node) != desired) {
      ops.add(
          desired
              ? op("add", "/spec/unschedulable", new JsonPrimitive(true))
              : op("remove", "/spec/unschedulable", null));
    }
    return ops;
  }

  /** Ops that set the annotation (null: remove it) while it is as read. */
  public static JsonArray markOps(V1Node node, String markKey, String markValue) {
    return markValue == null ? removeMark(node, markKey) : addMark(node, markKey, markValue);
  }

  /**
   * Ops that remove the taints at the indices {@code remove} of the list as read, each while it
   * still has the key and effect read there, then append {@code add} (the list itself is added
   * while it is still absent). Never the whole list: fields of other taints that the client model
   * does not know stay as they are.
   */
  public static JsonArray taintOps(V1Node node, Collection<Integer> remove, JsonArray add) {
    List<V1Taint> taints = node.getSpec() == null ? null : node.getSpec().getTaints();
    JsonArray ops = new JsonArray();
    // Highest index first: removing one does not move those still to remove.
    for (int i : remove.stream().sorted(Comparator.reverseOrder()).toList()) {
      V1Taint t = taints.get(i);
      ops.add(op("test", "/spec/taints/" + i + "/key", new JsonPrimitive(t.getKey())));
      ops.add(op("test", "/spec/taints/" + i + "/effect", new JsonPrimitive(t.getEffect())));
      ops.add(op("remove", "/spec/taints/" + i, null));
    }
    if (add.isEmpty()) {
      return ops;
    }
    if (taints == null || taints.isEmpty()) {
      // omitempty: a node read without taints has no list on the server.
      ops.add(op("test", "/spec/taints", JsonNull.INSTANCE));
      ops.add(op("add", "/spec/taints", add));
    } else {
      add.forEach(t -> ops.add(op("add", "/spec/taints/-", t)));
    }
    return ops;
  }

  private static JsonArray addMark(V1Node node, String markKey, String markValue) {
    JsonArray ops = new JsonArray();
    Map<String, String> annotations = node.getMetadata().getAnnotations();
    if (annotations == null || annotations.isEmpty()) {
      ops.add(op("test", "/metadata/annotations", JsonNull.INSTANCE));
      JsonObject mark = new JsonObject();
      mark.addProperty(markKey, markValue);
      ops.add(op("add", "/metadata/annotations", mark));
    } else {
      ops.add(op("test", annotationPath(markKey), jsonOrNull(annotations.get(markKey))));
      ops.add(op("add", annotationPath(markKey), new JsonPrimitive(markValue)));
    }
    return ops;
  }

  private static JsonArray removeMark(V1Node node, String markKey) {
    JsonArray ops = new JsonArray();
    ops.add(op("test", annotationPath(markKey), jsonOrNull(annotation(node, markKey))));
    ops.add(op("remove", annotationPath(markKey), null));
    return ops;
  }

  /** False is absent on the server (omitempty): a test of null passes there. */
  private static JsonObject testUnschedulable(V1Node node) {
    return op(
        "test",
        "/spec/unschedulable",
        unschedulable(node) ? new JsonPrimitive(true) : JsonNull.INSTANCE);
  }

  public static boolean unschedulable(V1Node node) {
    return node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
  }

  private static String annotation(V1Node node, String key) {
    Map<String, String> annotations =
        node.getMetadata() == null ? null : node.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  private static String annotationPath(String key) {
    // JSON Pointer: "~" is "~0" and "/" is "~1" in a member's name.
    return "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1");
  }

  private static JsonObject op(String op, String path, JsonElement value) {
    JsonObject o = new JsonObject();
    o.addProperty("op", op);
    o.addProperty("path", path);
    if (value != null) {
      o.add("value", value);
    }
    return o;
  }

  private static JsonElement jsonOrNull(String value) {
    return value == null ? JsonNull.INSTANCE : new JsonPrimitive(value);
  }

  public static class NodeNotFoundException extends ApiException {
    private static final long serialVersionUID = 1L;

    private final String node;

    public NodeNotFoundException(String node) {
      super(404, "node \"" + node + "\" not found");
      this.node = node;
    }

    @Override
    public String getMessage() {
      return "node \"" + node + "\" not found";
    }
  }
}
