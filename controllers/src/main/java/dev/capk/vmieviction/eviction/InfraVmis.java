package dev.capk.vmieviction.eviction;

import com.google.gson.JsonObject;
import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList;
import dev.capk.vmieviction.kube.WatchListApi;
import io.kubernetes.client.common.KubernetesType;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Preconditions;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.DeleteOptions;
import io.kubernetes.client.util.generic.options.PatchOptions;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * VMIs read from the informer's cache and written with narrow requests: a JSON merge patch of
 * annotations (guarded by resourceVersion) and a delete with UID precondition. Never a PUT: our VMI
 * model is partial. Reads see our own writes while the cache lags ({@link OwnWrites}).
 */
public final class InfraVmis {

  /** The VMI API of the infra cluster {@code client} reaches. */
  public static WatchListApi<VirtualMachineInstance, VirtualMachineInstanceList> api(
      ApiClient client) {
    return new WatchListApi<>(
        VirtualMachineInstance.class,
        VirtualMachineInstanceList.class,
        KubeVirtApi.GROUP,
        KubeVirtApi.VERSION,
        KubeVirtApi.VMI_PLURAL,
        client);
  }

  /** Appears in managedFields: who set the annotation. */
  public static final String FIELD_MANAGER = "capk-vmi-eviction-controller";

  /** (namespace, name) to the cached VMI or null. */
  private final BiFunction<String, String, VirtualMachineInstance> cache;

  /** (namespace, cluster name) to the cached VMIs of that tenant Cluster. */
  private final BiFunction<String, String, List<VirtualMachineInstance>> clusterIndex;

  private final GenericKubernetesApi<VirtualMachineInstance, VirtualMachineInstanceList> api;
  private final OwnWrites ownWrites = new OwnWrites();

  public InfraVmis(
      BiFunction<String, String, VirtualMachineInstance> cache,
      BiFunction<String, String, List<VirtualMachineInstance>> clusterIndex,
      GenericKubernetesApi<VirtualMachineInstance, VirtualMachineInstanceList> api) {
    this.cache = cache;
    this.clusterIndex = clusterIndex;
    this.api = api;
  }

  /** The cached VMIs of a tenant Cluster: an index lookup, never a request. */
  public List<VirtualMachineInstance> ofCluster(String namespace, String cluster) {
    return clusterIndex.apply(namespace, cluster).stream().map(ownWrites::freshest).toList();
  }

  public Optional<VirtualMachineInstance> get(String namespace, String name) {
    VirtualMachineInstance cached = cache.apply(namespace, name);
    if (cached == null) {
      ownWrites.forget(namespace, name);
      return Optional.empty();
    }
    return Optional.of(ownWrites.freshest(cached));
  }

  /**
   * Sets (or, with a null value, removes) annotations, guarded by the resourceVersion so a stale
   * cache can never overwrite a newer value: 409 when the object changed since read.
   *
   * @return the VMI as the server has it after the patch
   */
  public VirtualMachineInstance annotate(VirtualMachineInstance vmi, Map<String, String> changes)
      throws ApiException {
    PatchOptions options = new PatchOptions();
    options.setFieldManager(FIELD_MANAGER);
    V1Patch patch = new V1Patch(annotationPatch(vmi.getMetadata().getResourceVersion(), changes));
    VirtualMachineInstance updated =
        call(() ->
                api.patch(
                    vmi.getMetadata().getNamespace(),
                    vmi.getMetadata().getName(),
                    V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
                    patch,
                    options))
            .throwsApiException()
            .getObject();
    ownWrites.wrote(vmi, updated);
    return updated;
  }

  public VirtualMachineInstance annotate(VirtualMachineInstance vmi, String key, String value)
      throws ApiException {
    return annotate(vmi, Collections.singletonMap(key, value));
  }

  /** {@code {"metadata":{"resourceVersion":rv,"annotations":{key:value,...}}}}. */
  static String annotationPatch(String resourceVersion, Map<String, String> changes) {
    JsonObject annotations = new JsonObject();
    changes.forEach(annotations::addProperty);
    JsonObject metadata = new JsonObject();
    if (resourceVersion != null) {
      // A resourceVersion in a patch is a precondition: 409 if the object changed since we read it.
      metadata.addProperty("resourceVersion", resourceVersion);
    }
    metadata.add("annotations", annotations);
    JsonObject patch = new JsonObject();
    patch.add("metadata", metadata);
    return patch.toString();
  }

  public enum DeleteOutcome {
    DELETED,
    GONE,
    /** The UID precondition failed: a new VMI of that name exists; it is not ours to delete. */
    REPLACED
  }

  /** Deletes exactly this VMI: UID precondition, Foreground propagation. */
  public DeleteOutcome deleteExact(VirtualMachineInstance vmi) throws ApiException {
    V1ObjectMeta m = vmi.getMetadata();
    DeleteOptions options = new DeleteOptions();
    options.setPropagationPolicy("Foreground");
    options.setPreconditions(new V1Preconditions().uid(m.getUid()));
    KubernetesApiResponse<VirtualMachineInstance> r =
        call(() -> api.delete(m.getNamespace(), m.getName(), options));
    if (r.isSuccess()) {
      // Still there while its finalizers run (Foreground): a step that read the cache before it
      // saw the deletion would delete it again and tell the outcome twice.
      ownWrites.wrote(vmi, r.getObject());
      return DeleteOutcome.DELETED;
    }
    if (r.getHttpStatusCode() == 404) {
      return DeleteOutcome.GONE;
    }
    if (r.getHttpStatusCode() == 409) {
      return DeleteOutcome.REPLACED;
    }
    r.throwsApiException();
    throw new ApiException(r.getHttpStatusCode(), "delete failed");
  }

  /**
   * GenericKubernetesApi reports an I/O failure as an IllegalStateException, not an ApiException,
   * and a response without HTTP status would count as success: turn both into ApiException(0).
   */
  static <T extends KubernetesType> KubernetesApiResponse<T> call(
      Supplier<KubernetesApiResponse<T>> request) throws ApiException {
    try {
      KubernetesApiResponse<T> r = request.get();
      if (r.getHttpStatusCode() == 0) {
        throw new ApiException(0, "no HTTP response");
      }
      return r;
    } catch (IllegalStateException e) {
      throw new ApiException(e.getCause() != null ? e.getCause() : e);
    }
  }

  /**
   * The VMIs as our own writes left them, until the cache has caught up. Under load the watch can
   * run seconds behind; a step reading the cache would miss the drain start written a moment ago,
   * take it for removed, and have its corrective write refused (409) until the cache caught up.
   *
   * <p>Sound without ordering resourceVersions (they are opaque): a cached VMI whose version a
   * write of ours was accepted over is older than that write's result, which is served instead; any
   * other version is the cache's, and this forgets the VMI.
   */
  static final class OwnWrites {

    /** Our latest write's result, and the versions our writes were accepted over. */
    private record Written(String uid, VirtualMachineInstance result, Set<String> superseded) {}

    private final Map<String, Written> byKey = new ConcurrentHashMap<>();

    /** A write of ours guarded by {@code before}'s resourceVersion was accepted: {@code after}. */
    void wrote(VirtualMachineInstance before, VirtualMachineInstance after) {
      String uid = before.getMetadata().getUid();
      String over = before.getMetadata().getResourceVersion();
      if (after == null || after.getMetadata() == null || over == null) {
        return;
      }
      byKey.compute(
          key(before),
          (k, known) -> {
            Set<String> superseded = new HashSet<>();
            if (known != null && known.uid().equals(uid)) {
              superseded.addAll(known.superseded());
            }
            superseded.add(over);
            return new Written(uid, after, Set.copyOf(superseded));
          });
    }

    /** The fresher of the cached VMI and our latest write of it. */
    VirtualMachineInstance freshest(VirtualMachineInstance cached) {
      Written w = cached.getMetadata() == null ? null : byKey.get(key(cached));
      if (w == null) {
        return cached;
      }
      if (w.uid().equals(cached.getMetadata().getUid())
          && w.superseded().contains(cached.getMetadata().getResourceVersion())) {
        return w.result();
      }
      // The cache has our write or something newer (or another VMI of that name): it is current.
      byKey.remove(key(cached), w);
      return cached;
    }

    /** The VMI is gone from the cache. */
    void forget(String namespace, String name) {
      byKey.remove(namespace + "/" + name);
    }

    int size() {
      return byKey.size();
    }

    private static String key(VirtualMachineInstance vmi) {
      return vmi.getMetadata().getNamespace() + "/" + vmi.getMetadata().getName();
    }
  }
}
