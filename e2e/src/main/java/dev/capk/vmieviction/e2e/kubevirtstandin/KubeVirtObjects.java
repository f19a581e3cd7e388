package dev.capk.vmieviction.e2e.kubevirtstandin;

import com.google.gson.JsonObject;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.util.PatchUtils;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.util.List;
import java.util.Optional;

/** The kubevirt.io/v1 objects the stand-in reads and writes, through the infra API server. */
final class KubeVirtObjects {
  static final String GROUP = "kubevirt.io";
  static final String VERSION = "v1";

  private final ApiClient client;
  final DynamicKubernetesApi vmis;
  final DynamicKubernetesApi vms;
  private final DynamicKubernetesApi kubevirts;

  KubeVirtObjects(ApiClient client) {
    this.client = client;
    this.vmis = new DynamicKubernetesApi(GROUP, VERSION, "virtualmachineinstances", client);
    this.vms = new DynamicKubernetesApi(GROUP, VERSION, "virtualmachines", client);
    this.kubevirts = new DynamicKubernetesApi(GROUP, VERSION, "kubevirts", client);
  }

  Optional<DynamicKubernetesObject> vmi(String namespace, String name) throws ApiException {
    KubernetesApiResponse<DynamicKubernetesObject> r = vmis.get(namespace, name);
    if (r.getHttpStatusCode() == 404) {
      return Optional.empty();
    }
    return Optional.of(readable(r.throwsApiException().getObject(), namespace + "/" + name));
  }

  /**
   * The dynamic API reads through the client's process-wide Gson: should something in the process
   * have replaced it without the dynamic adapter, every object comes back empty. Say so instead of
   * handing on an object without metadata.
   */
  private static DynamicKubernetesObject readable(DynamicKubernetesObject o, String what)
      throws ApiException {
    if (o == null || o.getMetadata() == null || o.getMetadata().getUid() == null) {
      throw new ApiException(
          "the API server's answer for " + what + " could not be read (no metadata)");
    }
    return o;
  }

  List<DynamicKubernetesObject> allVmis() throws ApiException {
    return items(vmis.list(), "virtualmachineinstances");
  }

  List<DynamicKubernetesObject> allVms() throws ApiException {
    return items(vms.list(), "virtualmachines");
  }

  /**
   * The client's generic API reports a failed connection as a success without an object: say so
   * instead.
   */
  private static List<DynamicKubernetesObject> items(
      KubernetesApiResponse<io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject>
          r,
      String what)
      throws ApiException {
    r.throwsApiException();
    if (r.getObject() == null) {
      throw new ApiException("listing " + what + " returned nothing (API server unreachable?)");
    }
    // An empty list of custom resources may come without "items" at all (the API server's
    // streaming list encoder), which the client's list object turns into a NullPointerException.
    if (!r.getObject().getRaw().has("metadata")) {
      throw new ApiException("listing " + what + " could not be read (no metadata)");
    }
    com.google.gson.JsonElement items = r.getObject().getRaw().get("items");
    if (items == null || items.isJsonNull()) {
      return List.of();
    }
    return r.getObject().getItems();
  }

  /** The cluster-wide eviction strategy of the KubeVirt CR, if one is installed and sets it. */
  Optional<String> clusterEvictionStrategy() throws ApiException {
    KubernetesApiResponse<io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject>
        list = kubevirts.list();
    // A resource whose watch cache is still filling answers 429 "storage is (re)initializing": wait
    // it out.
    for (int attempt = 0; list.getHttpStatusCode() == 429 && attempt < 50; attempt++) {
      sleep();
      list = kubevirts.list();
    }
    for (DynamicKubernetesObject kv : list.throwsApiException().getObject().getItems()) {
      Optional<String> s = Vmi.string(kv.getRaw(), "spec", "configuration", "evictionStrategy");
      if (s.isPresent()) {
        return s;
      }
    }
    return Optional.empty();
  }

  private static void sleep() throws ApiException {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiException(e);
    }
  }

  /**
   * A JSON merge patch of the VMI's status subresource, as virt-controller and virt-handler write
   * it.
   */
  void patchVmiStatus(String namespace, String name, JsonObject status) throws ApiException {
    patchStatus("virtualmachineinstances", namespace, name, status);
  }

  /** A JSON merge patch of the status subresource of a kubevirt.io/v1 object. */
  void patchStatus(String plural, String namespace, String name, JsonObject status)
      throws ApiException {
    JsonObject patch = new JsonObject();
    patch.add("status", status);
    CustomObjectsApi api = new CustomObjectsApi(client);
    PatchUtils.patch(
        Object.class,
        () ->
            api.patchNamespacedCustomObjectStatus(
                    GROUP, VERSION, namespace, plural, name, new V1Patch(patch.toString()))
                .buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
        client);
  }
}
