package dev.capk.vmieviction.workload;

import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capi.ClusterList;
import dev.capk.vmieviction.api.capi.Machine;
import dev.capk.vmieviction.api.capi.MachineList;
import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.api.capk.KubevirtMachineList;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.generic.GenericKubernetesApi;

/**
 * The official client's generic APIs for the Cluster API objects behind a VMI, built one way for
 * every reader (GETs) and every informer (list and watch).
 */
public final class ManagementApis {

  private ManagementApis() {}

  public static GenericKubernetesApi<Cluster, ClusterList> clusters(
      ApiClient client, String clusterApiVersion) {
    return new GenericKubernetesApi<>(
        Cluster.class,
        ClusterList.class,
        ClusterApi.GROUP,
        clusterApiVersion,
        ClusterApi.CLUSTER_PLURAL,
        client);
  }

  public static GenericKubernetesApi<Machine, MachineList> machines(
      ApiClient client, String clusterApiVersion) {
    return new GenericKubernetesApi<>(
        Machine.class,
        MachineList.class,
        ClusterApi.GROUP,
        clusterApiVersion,
        ClusterApi.MACHINE_PLURAL,
        client);
  }

  public static GenericKubernetesApi<KubevirtMachine, KubevirtMachineList> kubevirtMachines(
      ApiClient client) {
    return new GenericKubernetesApi<>(
        KubevirtMachine.class,
        KubevirtMachineList.class,
        CapkApi.GROUP,
        CapkApi.VERSION,
        CapkApi.KUBEVIRT_MACHINE_PLURAL,
        client);
  }
}
