package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import java.util.ArrayList;
import java.util.List;

/** Finds nodes by name or label selector, for commands that act on several nodes. */
final class NodeLister {
  private final RawApi api;
  private final CoreV1Api core;

  NodeLister(RawApi api) {
    this.api = api;
    this.core = new CoreV1Api(api.client());
  }

  /** Names of the nodes matching {@code labelSelector} (empty: all), page by page. */
  List<String> names(String labelSelector) throws ApiException {
    List<String> names = new ArrayList<>();
    String token = null;
    do {
      CoreV1Api.APIlistNodeRequest req = core.listNode().limit(DrainOptions.DEFAULT_CHUNK_SIZE);
      if (!labelSelector.isBlank()) {
        req = req.labelSelector(labelSelector);
      }
      if (token != null) {
        req = req._continue(token);
      }
      V1NodeList page = api.get(req.buildCall(null), V1NodeList.class);
      if (page.getItems() != null) {
        for (V1Node n : page.getItems()) {
          names.add(n.getMetadata().getName());
        }
      }
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
    return names;
  }

  /**
   * @throws NodeNotFoundException if there is no node of that name
   */
  void require(String name) throws ApiException {
    RawApi.Answer answer = api.execute(core.readNode(name).buildCall(null));
    if (answer.code() == 404) {
      throw new NodeNotFoundException(name);
    }
    if (!answer.ok()) {
      throw answer.toException();
    }
  }
}
