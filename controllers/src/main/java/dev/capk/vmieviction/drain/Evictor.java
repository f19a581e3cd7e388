package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Eviction;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Preconditions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;

/**
 * Sends one eviction (policy group/version as discovered) or, when evictions are off, one deletion,
 * and classifies the answer. Both carry the pod's UID as a precondition, so a pod recreated under
 * the same name (StatefulSet) is never hit by a request meant for its predecessor.
 *
 * <p>An eviction gets time to finish: the API server records the pod in its PodDisruptionBudget
 * before it deletes the pod, and a client that gives up in between (a guest client's short read
 * timeout on a busy API server) cancels the deletion but not the record, so the budget refuses that
 * pod for the two minutes until its controller drops the record. Evictions therefore wait up to
 * {@link #EVICTION_TIMEOUT}, never past the drain's deadline.
 */
final class Evictor {
  private final RawApi api;
  private final CoreV1Api core;
  private final DrainOptions options;
  static final Duration EVICTION_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration MIN_EVICTION_TIMEOUT = Duration.ofSeconds(1);

  /** "policy/v1", or null to delete instead of evicting. */
  private final String evictionGroupVersion;

  /**
   * The client's HTTP client (same connections) with a read timeout long enough for an eviction.
   */
  private final OkHttpClient evictionHttp;

  Evictor(RawApi api, DrainOptions options, String evictionGroupVersion) {
    this.api = api;
    this.core = new CoreV1Api(api.client());
    this.options = options;
    this.evictionGroupVersion = evictionGroupVersion;
    this.evictionHttp =
        api.client()
            .getHttpClient()
            .newBuilder()
            .readTimeout(EVICTION_TIMEOUT)
            .writeTimeout(EVICTION_TIMEOUT)
            .build();
  }

  boolean usingEviction() {
    return evictionGroupVersion != null;
  }

  EvictionOutcome evictOrDelete(PodRef pod, Deadline deadline) {
    try {
      okhttp3.Call built = usingEviction() ? evictionCall(pod) : deletionCall(pod);
      okhttp3.Call call = evictionHttp.newCall(built.request());
      call.timeout()
          .timeout(
              Math.max(MIN_EVICTION_TIMEOUT.toNanos(), deadline.cap(EVICTION_TIMEOUT).toNanos()),
              TimeUnit.NANOSECONDS);
      RawApi.Answer answer = api.execute(call);
      return EvictionOutcome.classify(answer.code(), answer.body(), answer.headers());
    } catch (ApiException e) {
      return EvictionOutcome.unreachable(ApiStatus.describe(e));
    }
  }

  V1DeleteOptions deleteOptions(PodRef pod) {
    V1DeleteOptions o = new V1DeleteOptions();
    if (options.gracePeriodSeconds() >= 0) {
      o.setGracePeriodSeconds((long) options.gracePeriodSeconds());
    }
    if (pod.uid() != null) {
      o.setPreconditions(new V1Preconditions().uid(pod.uid()));
    }
    if (options.dryRun() == DryRun.SERVER) {
      o.setDryRun(List.of("All"));
    }
    return o;
  }

  private okhttp3.Call evictionCall(PodRef pod) throws ApiException {
    V1Eviction eviction =
        new V1Eviction()
            .apiVersion(evictionGroupVersion)
            .kind("Eviction")
            .metadata(new V1ObjectMeta().name(pod.name()).namespace(pod.namespace()))
            .deleteOptions(deleteOptions(pod));
    return core.createNamespacedPodEviction(pod.name(), pod.namespace(), eviction).buildCall(null);
  }

  private okhttp3.Call deletionCall(PodRef pod) throws ApiException {
    CoreV1Api.APIdeleteNamespacedPodRequest req =
        core.deleteNamespacedPod(pod.name(), pod.namespace()).body(deleteOptions(pod));
    if (options.dryRun() == DryRun.SERVER) {
      req = req.dryRun("All");
    }
    return req.buildCall(null);
  }
}
