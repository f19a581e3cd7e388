package dev.capk.vmieviction.events;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.util.PatchUtils;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.UnaryOperator;

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
    return of(
        core,
        UnaryOperator.identity(),
        e -> e instanceof ApiException a ? RawApi.describe(a) : e.getClass().getSimpleName());
  }

  /**
   * Calls through {@code core}, each wrapped by {@code guard} (a guest cluster's circuit breaker),
   * failures told by {@code describe}.
   */
  static EventStore of(
      CoreV1Api core,
      UnaryOperator<Callable<CoreV1Event>> guard,
      Function<Exception, String> describe) {
    return new EventStore() {
      @Override
      public void create(CoreV1Event event) throws Exception {
        String namespace = event.getMetadata().getNamespace();
        guard.apply(() -> core.createNamespacedEvent(namespace, event).execute()).call();
      }

      @Override
      public void mergePatch(String namespace, String name, String patch) throws Exception {
        PatchUtils.PatchCallFunc call =
            () -> core.patchNamespacedEvent(name, namespace, new V1Patch(patch)).buildCall(null);
        String type = V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH;
        guard
            .apply(() -> PatchUtils.patch(CoreV1Event.class, call, type, core.getApiClient()))
            .call();
      }

      @Override
      public CoreV1Event read(String namespace, String name) throws Exception {
        return guard.apply(() -> core.readNamespacedEvent(name, namespace).execute()).call();
      }

      @Override
      public String describe(Exception e) {
        return describe.apply(e);
      }
    };
  }
}
