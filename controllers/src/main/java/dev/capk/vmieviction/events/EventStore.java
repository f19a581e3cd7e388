package dev.capk.vmieviction.events;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.util.PatchUtils;

/** The three core/v1 Event calls a series needs, against one cluster. */
public interface EventStore {

  void create(CoreV1Event event) throws Exception;

  /** A JSON merge patch of the fields a series update changes. */
  void mergePatch(String namespace, String name, String patch) throws Exception;

  CoreV1Event read(String namespace, String name) throws Exception;

  /** What went wrong, for a log line: never a secret. */
  String describe(Exception e);

  /** Plain calls through {@code core} (the infra cluster, the request client's timeouts). */
  static EventStore of(CoreV1Api core) {
    return new EventStore() {
      @Override
      public void create(CoreV1Event event) throws ApiException {
        core.createNamespacedEvent(event.getMetadata().getNamespace(), event).execute();
      }

      @Override
      public void mergePatch(String namespace, String name, String patch) throws ApiException {
        PatchUtils.patch(
            CoreV1Event.class,
            () -> core.patchNamespacedEvent(name, namespace, new V1Patch(patch)).buildCall(null),
            V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
            core.getApiClient());
      }

      @Override
      public CoreV1Event read(String namespace, String name) throws ApiException {
        return core.readNamespacedEvent(name, namespace).execute();
      }

      @Override
      public String describe(Exception e) {
        return e instanceof ApiException a ? RawApi.describe(a) : e.getClass().getSimpleName();
      }
    };
  }
}
