package dev.capk.vmieviction.maintenance;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.maintenance.NodeMaintenance;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.api.maintenance.NodeMaintenanceList;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import java.io.IOException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * {@link MaintenanceCluster} over the official client: requests are built by its API classes (paths,
 * auth, TLS are the client's), answers read leniently, so a field a newer API server adds to Node
 * cannot break maintenance. Patches state their content type (JSON merge patch) explicitly.
 */
public final class ApiMaintenanceCluster implements MaintenanceCluster {
  /** The client's Gson setup (dates, quantities) without its strict per-model validators. */
  static final Gson LENIENT = JSON.createGson()
      .registerTypeAdapter(OffsetDateTime.class, new JSON.OffsetDateTimeTypeAdapter())
      .registerTypeAdapter(LocalDate.class, new JSON.LocalDateTypeAdapter())
      .registerTypeAdapter(byte[].class, new JSON.ByteArrayAdapter())
      .create();
  private static final MediaType MERGE_PATCH = MediaType.get(V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH);
  private static final int MAX_CONFLICTS = 5;

  private final ApiClient client;
  private final CoreV1Api core;
  private final CustomObjectsApi custom;

  public ApiMaintenanceCluster(ApiClient client) {
    this.client = client;
    this.core = new CoreV1Api(client);
    this.custom = new CustomObjectsApi(client);
  }

  @Override
  public Optional<NodeView> readNode(String name) throws ApiException {
    Answer a = execute(core.readNode(name).buildCall(null));
    if (a.code == 404) {
      return Optional.empty();
    }
    return Optional.of(NodeView.of(a.orThrow().json()));
  }

  @Override
  public void patchNode(String name, String mergePatch) throws ApiException {
    execute(mergePatch(core.patchNode(name, new V1Patch(mergePatch)).buildCall(null), mergePatch)).orThrow();
  }

  @Override
  public Optional<NodeMaintenance> readMaintenance(String name) throws ApiException {
    Answer a = execute(getCall(name));
    if (a.code == 404) {
      return Optional.empty();
    }
    return Optional.ofNullable(LENIENT.fromJson(a.orThrow().body, NodeMaintenance.class));
  }

  @Override
  public List<NodeMaintenance> listMaintenances() throws ApiException {
    Answer a = execute(custom.listClusterCustomObject(NodeMaintenanceApi.GROUP, NodeMaintenanceApi.VERSION,
        NodeMaintenanceApi.PLURAL).buildCall(null)).orThrow();
    NodeMaintenanceList list = LENIENT.fromJson(a.body, NodeMaintenanceList.class);
    return list == null || list.getItems() == null ? List.of() : list.getItems();
  }

  @Override
  public boolean addFinalizer(String name) throws ApiException {
    for (int attempt = 1; ; attempt++) {
      Answer read = execute(getCall(name));
      if (read.code == 404) {
        return false;
      }
      JsonObject meta = read.orThrow().json().getAsJsonObject("metadata");
      if (meta.has("deletionTimestamp") && !meta.get("deletionTimestamp").isJsonNull()) {
        return false;
      }
      List<String> finalizers = finalizers(meta);
      if (finalizers.contains(NodeMaintenanceApi.FINALIZER)) {
        return true;
      }
      finalizers.add(NodeMaintenanceApi.FINALIZER);
      Answer a = execute(patchCall(name, finalizerPatch(meta, finalizers)));
      if (a.code == 409 && attempt < MAX_CONFLICTS) {
        continue;
      }
      if (a.code == 404) {
        return false;
      }
      a.orThrow();
      return true;
    }
  }

  @Override
  public boolean removeFinalizer(String name) throws ApiException {
    for (int attempt = 1; ; attempt++) {
      Answer read = execute(getCall(name));
      if (read.code == 404) {
        return false;
      }
      JsonObject meta = read.orThrow().json().getAsJsonObject("metadata");
      List<String> finalizers = finalizers(meta);
      if (!finalizers.remove(NodeMaintenanceApi.FINALIZER)) {
        return false;
      }
      Answer a = execute(patchCall(name, finalizerPatch(meta, finalizers)));
      if (a.code == 409 && attempt < MAX_CONFLICTS) {
        continue;
      }
      if (a.code == 404) {
        return false;
      }
      a.orThrow();
      return true;
    }
  }

  @Override
  public void patchStatus(String name, String mergePatch) throws ApiException {
    Call call = custom.patchClusterCustomObjectStatus(NodeMaintenanceApi.GROUP, NodeMaintenanceApi.VERSION,
        NodeMaintenanceApi.PLURAL, name, new V1Patch(mergePatch)).buildCall(null);
    execute(mergePatch(call, mergePatch)).orThrow();
  }

  private Call getCall(String name) throws ApiException {
    return custom.getClusterCustomObject(NodeMaintenanceApi.GROUP, NodeMaintenanceApi.VERSION,
        NodeMaintenanceApi.PLURAL, name).buildCall(null);
  }

  private Call patchCall(String name, String mergePatch) throws ApiException {
    return mergePatch(custom.patchClusterCustomObject(NodeMaintenanceApi.GROUP, NodeMaintenanceApi.VERSION,
        NodeMaintenanceApi.PLURAL, name, new V1Patch(mergePatch)).buildCall(null), mergePatch);
  }

  /** The finalizer list is replaced whole, so the patch carries the resourceVersion it was read at. */
  static String finalizerPatch(JsonObject meta, List<String> finalizers) {
    JsonObject m = new JsonObject();
    m.addProperty("resourceVersion", meta.get("resourceVersion").getAsString());
    if (finalizers.isEmpty()) {
      m.add("finalizers", JsonNull.INSTANCE);
    } else {
      JsonArray a = new JsonArray();
      finalizers.forEach(a::add);
      m.add("finalizers", a);
    }
    JsonObject patch = new JsonObject();
    patch.add("metadata", m);
    return patch.toString();
  }

  private static List<String> finalizers(JsonObject meta) {
    List<String> out = new ArrayList<>();
    JsonElement f = meta.get("finalizers");
    if (f != null && f.isJsonArray()) {
      f.getAsJsonArray().forEach(e -> out.add(e.getAsString()));
    }
    return out;
  }

  /** The generated client guesses a patch's content type from its text; state it: a merge patch. */
  private Call mergePatch(Call built, String body) {
    Request request = built.request().newBuilder()
        .method("PATCH", RequestBody.create(body, MERGE_PATCH))
        .build();
    return client.getHttpClient().newCall(request);
  }

  private record Answer(int code, String body) {
    Answer orThrow() throws ApiException {
      if (code >= 200 && code < 300) {
        return this;
      }
      throw new ApiException(code, message(code, body));
    }

    JsonObject json() {
      return JsonParser.parseString(body).getAsJsonObject();
    }
  }

  /** The Status message of an error answer, or "HTTP code". Never the request (no credentials). */
  static String message(int code, String body) {
    try {
      JsonObject s = JsonParser.parseString(body).getAsJsonObject();
      JsonElement m = s.get("message");
      if (m != null && m.isJsonPrimitive() && !m.getAsString().isBlank()) {
        return m.getAsString();
      }
    } catch (RuntimeException e) {
      // not a Status: fall through
    }
    return "HTTP " + code;
  }

  private static Answer execute(Call call) throws ApiException {
    try (Response response = call.execute()) {
      ResponseBody body = response.body();
      return new Answer(response.code(), body == null ? "" : body.string());
    } catch (IOException e) {
      throw new ApiException(e);
    }
  }
}
