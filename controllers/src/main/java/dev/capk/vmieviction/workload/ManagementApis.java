package dev.capk.vmieviction.workload;

import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capi.ClusterList;
import dev.capk.vmieviction.api.capi.Machine;
import dev.capk.vmieviction.api.capi.MachineList;
import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.api.capk.KubevirtMachineList;
import dev.capk.vmieviction.kube.WatchListApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.ApisApi;
import io.kubernetes.client.openapi.models.V1APIGroupList;
import io.kubernetes.client.openapi.models.V1GroupVersionForDiscovery;
import java.util.List;

/**
 * The official client's generic APIs for the Cluster API objects behind a VMI, built one way for
 * every reader (GETs) and every informer (list and watch).
 */
public final class ManagementApis {

  private ManagementApis() {}

  /**
   * The version of cluster.x-k8s.io to read: {@code asked} if set, else v1beta2 if the server
   * serves it, else v1beta1 if it does, else v1beta2 (the informers then report what is missing).
   * Discovery is one request; a failed one is tried again ({@code attempts} in all, the wait
   * doubling from half a second), never taken for "not served".
   */
  public static String clusterApiVersion(ApiClient client, String asked, int attempts)
      throws ApiException, InterruptedException {
    if (!asked.isEmpty()) {
      return asked;
    }
    for (int attempt = 1; ; attempt++) {
      try {
        return preferred(new ApisApi(client).getAPIVersions().execute());
      } catch (ApiException e) {
        if (attempt >= attempts) {
          throw e;
        }
        Thread.sleep(Math.min(8_000L, 500L << (attempt - 1)));
      }
    }
  }

  /** The version of cluster.x-k8s.io to read, given a discovery answer. */
  static String preferred(V1APIGroupList groups) {
    List<String> served =
        groups.getGroups().stream()
            .filter(g -> ClusterApi.GROUP.equals(g.getName()))
            .flatMap(g -> g.getVersions().stream())
            .map(V1GroupVersionForDiscovery::getVersion)
            .toList();
    return served.contains(ClusterApi.V1BETA2) || !served.contains(ClusterApi.V1BETA1)
        ? ClusterApi.V1BETA2
        : ClusterApi.V1BETA1;
  }

  public static WatchListApi<Cluster, ClusterList> clusters(ApiClient client, String v) {
    return new WatchListApi<>(
        Cluster.class, ClusterList.class, ClusterApi.GROUP, v, ClusterApi.CLUSTER_PLURAL, client);
  }

  public static WatchListApi<Machine, MachineList> machines(ApiClient client, String v) {
    return new WatchListApi<>(
        Machine.class, MachineList.class, ClusterApi.GROUP, v, ClusterApi.MACHINE_PLURAL, client);
  }

  public static WatchListApi<KubevirtMachine, KubevirtMachineList> kubevirtMachines(
      ApiClient client) {
    return new WatchListApi<>(
        KubevirtMachine.class,
        KubevirtMachineList.class,
        CapkApi.GROUP,
        CapkApi.VERSION,
        CapkApi.KUBEVIRT_MACHINE_PLURAL,
        client);
  }
}
