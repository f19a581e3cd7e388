package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import java.util.Optional;

/**
 * Reads one pod again, e.g. after a refused eviction: it may have gone, or been replaced by a
 * namesake.
 */
final class PodReader {
  private final RawApi api;
  private final CoreV1Api core;

  PodReader(RawApi api) {
    this.api = api;
    this.core = new CoreV1Api(api.client());
  }

  /** The pod named like {@code ref} now (whatever its UID), or empty if there is none. */
  Optional<V1Pod> read(PodRef ref) throws ApiException {
    RawApi.Answer a =
        api.execute(core.readNamespacedPod(ref.name(), ref.namespace()).buildCall(null));
    if (a.code() == 404) {
      return Optional.empty();
    }
    if (!a.ok()) {
      throw a.toException();
    }
    return Optional.of(LenientJson.parse(a.body(), V1Pod.class));
  }
}
