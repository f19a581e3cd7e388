package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.util.ArrayList;
import java.util.List;

/**
 * Lists the pods bound to a node, page by page, and remembers the list's resourceVersion for a
 * watch to resume from.
 */
final class PodLister {
  /**
   * A continue token expires after a few minutes; a list that slow is restarted, but not forever.
   */
  private static final int MAX_RESTARTS = 3;

  record Listing(List<V1Pod> pods, String resourceVersion) {}

  private final RawApi api;
  private final CoreV1Api core;

  PodLister(RawApi api) {
    this.api = api;
    this.core = new CoreV1Api(api.client());
  }

  static String nodeFieldSelector(String node) {
    return "spec.nodeName=" + node;
  }

  /**
   * All pods on {@code node} matching {@code labelSelector} (empty: all). The pages form one
   * consistent snapshot, whose resourceVersion is returned.
   */
  Listing list(String node, String labelSelector, int chunkSize) throws ApiException {
    for (int attempt = 0; ; attempt++) {
      try {
        return listOnce(node, labelSelector, chunkSize);
      } catch (ApiException e) {
        if (e.getCode() != 410 || attempt >= MAX_RESTARTS) {
          throw e;
        }
        // 410 Expired: the snapshot behind the continue token is gone; start a fresh one.
      }
    }
  }

  private Listing listOnce(String node, String labelSelector, int chunkSize) throws ApiException {
    List<V1Pod> pods = new ArrayList<>();
    String resourceVersion = null;
    String token = null;
    do {
      CoreV1Api.APIlistPodForAllNamespacesRequest req =
          core.listPodForAllNamespaces().fieldSelector(nodeFieldSelector(node));
      if (!labelSelector.isEmpty()) {
        req = req.labelSelector(labelSelector);
      }
      if (chunkSize > 0) {
        req = req.limit(chunkSize);
      }
      if (token != null) {
        req = req._continue(token);
      }
      V1PodList page = api.get(req.buildCall(null), V1PodList.class);
      if (page.getItems() != null) {
        pods.addAll(page.getItems());
      }
      if (resourceVersion == null && page.getMetadata() != null) {
        resourceVersion = page.getMetadata().getResourceVersion();
      }
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
    return new Listing(pods, resourceVersion);
  }
}
