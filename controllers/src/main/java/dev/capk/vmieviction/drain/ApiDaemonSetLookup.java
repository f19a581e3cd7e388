package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import java.util.HashMap;
import java.util.Map;

/**
 * Looks DaemonSets up through the API, once per namespace/name per drain (many pods share one
 * DaemonSet).
 */
final class ApiDaemonSetLookup implements DaemonSetLookup {
  private final RawApi api;
  private final AppsV1Api apps;
  private final Map<String, Answer> cache = new HashMap<>();

  ApiDaemonSetLookup(RawApi api) {
    this.api = api;
    this.apps = new AppsV1Api(api.client());
  }

  @Override
  public synchronized Answer find(String namespace, String name) {
    return cache.computeIfAbsent(namespace + "/" + name, k -> lookup(namespace, name));
  }

  private Answer lookup(String namespace, String name) {
    try {
      RawApi.Answer a = api.execute(apps.readNamespacedDaemonSet(name, namespace).buildCall(null));
      if (a.ok()) {
        return Answer.exists();
      }
      if (a.code() == 404) {
        return Answer.notFound(name);
      }
      return Answer.unknown(
          "cannot look up daemonset "
              + namespace
              + "/"
              + name
              + ": "
              + ApiStatus.describe(a.toException()));
    } catch (ApiException e) {
      return Answer.unknown(
          "cannot look up daemonset " + namespace + "/" + name + ": " + ApiStatus.describe(e));
    }
  }
}
