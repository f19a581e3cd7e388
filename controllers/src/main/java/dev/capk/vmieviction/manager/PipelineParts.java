package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.kubevirt.KubeVirt;
import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.KubeVirtList;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList;
import dev.capk.vmieviction.events.EventSeriesBook;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.events.EventStore;
import dev.capk.vmieviction.events.EventWriters;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.time.Clock;
import java.util.Set;

/**
 * What the pipeline of the infra cluster of --kubeconfig and those of external infra clusters build
 * alike: their clients' time bounds, their KubeVirt APIs, their event recorders and their work
 * queue requests.
 */
final class PipelineParts {

  private PipelineParts() {}

  /** A client for watches: no read timeout, a watch waits as long as nothing happens. */
  static ApiClient forWatches(ApiClient c) {
    c.setReadTimeout(0);
    return c;
  }

  /** A client for requests: each one bounded in time. */
  static ApiClient forRequests(ApiClient c) {
    c.setReadTimeout((int) Manager.REQUEST_READ_TIMEOUT.toMillis());
    c.setConnectTimeout((int) Manager.REQUEST_CONNECT_TIMEOUT.toMillis());
    return c;
  }

  static GenericKubernetesApi<VirtualMachineInstance, VirtualMachineInstanceList> vmiApi(
      ApiClient c) {
    return new GenericKubernetesApi<>(
        VirtualMachineInstance.class,
        VirtualMachineInstanceList.class,
        KubeVirtApi.GROUP,
        KubeVirtApi.VERSION,
        KubeVirtApi.VMI_PLURAL,
        c);
  }

  static GenericKubernetesApi<KubeVirt, KubeVirtList> kubevirtApi(ApiClient c) {
    return new GenericKubernetesApi<>(
        KubeVirt.class,
        KubeVirtList.class,
        KubeVirtApi.GROUP,
        KubeVirtApi.VERSION,
        KubeVirtApi.KUBEVIRT_PLURAL,
        c);
  }

  /** Our own series recorder, not client-java's legacy broadcaster: see EventSeriesRecorder. */
  static EventSeriesRecorder events(
      ApiClient requests, Set<String> outcomes, EventWriters writers) {
    return new EventSeriesRecorder(
        new EventSeriesBook(),
        EventStore.of(new CoreV1Api(requests)),
        "capk-vmi-eviction-controller",
        outcomes,
        Clock.systemUTC(),
        writers);
  }

  /** The work queue's request for a VMI key ({@code namespace/name}). */
  static Request request(String key) {
    int slash = key.indexOf('/');
    return new Request(key.substring(0, slash), key.substring(slash + 1));
  }
}
