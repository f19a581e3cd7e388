package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capi.Machine;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.MachineContractCheck.MachineContract;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.workload.CachedObjects;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClusterRef;
import dev.capk.vmieviction.workload.ManagementApis;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads a VMI's Cluster, KubevirtMachine (named by its {@code
 * capk.cluster.x-k8s.io/kubevirt-machine-name} label) and the Machine owning that, from the
 * informer caches when they hold them (no request), else with one GET each, in the namespace the
 * {@link TenantMapping} lets the VMI reach: a VMI label never leads to another tenant's objects.
 */
public final class ApiManagementObjects implements ManagementObjects {

  private final TenantMapping namespaces;
  private final Source<Cluster> clusters;
  private final Source<KubevirtMachine> kubevirtMachines;
  private final Source<Machine> machines;

  /** Where each kind is looked for before it is read with a GET. */
  public record Cached(
      CachedObjects<Cluster> clusters,
      CachedObjects<KubevirtMachine> kubevirtMachines,
      CachedObjects<Machine> machines) {}

  public ApiManagementObjects(
      ApiClient infra, String clusterApiVersion, TenantMapping namespaces, Cached cached) {
    this.namespaces = namespaces;
    this.clusters =
        new Source<>(
            "Cluster", cached.clusters(), ManagementApis.clusters(infra, clusterApiVersion));
    this.kubevirtMachines =
        new Source<>(
            "KubevirtMachine", cached.kubevirtMachines(), ManagementApis.kubevirtMachines(infra));
    this.machines =
        new Source<>(
            "Machine", cached.machines(), ManagementApis.machines(infra, clusterApiVersion));
  }

  @Override
  public MachineContract.Facts read(VirtualMachineInstance vmi) throws GuestAccessException {
    GuestClusterRef ref = namespaces.clusterOf(vmi);
    String ns = ref.namespace();
    List<String> unavailable = new ArrayList<>();
    Optional<Cluster> cluster = clusters.get(ns, ref.name(), unavailable);
    String kvmName = LenientJson.label(vmi, CapkLabels.KUBEVIRT_MACHINE_NAME);
    Optional<KubevirtMachine> kvm = Optional.empty();
    if (kvmName == null || kvmName.isBlank()) {
      unavailable.add("the VMI has no label " + CapkLabels.KUBEVIRT_MACHINE_NAME);
    } else {
      kvm = kubevirtMachines.get(ns, kvmName, unavailable);
    }
    // The Cluster API Machine among the owners (CAPI sets it on its infra machines).
    Optional<String> owner =
        kvm.map(KubevirtMachine::getMetadata).map(V1ObjectMeta::getOwnerReferences).stream()
            .flatMap(List::stream)
            .filter(o -> ClusterApi.MACHINE_KIND.equals(o.getKind()))
            .filter(o -> String.valueOf(o.getApiVersion()).startsWith(ClusterApi.GROUP + "/"))
            .map(o -> o.getName())
            .findFirst();
    if (kvm.isPresent() && owner.isEmpty()) {
      unavailable.add("KubevirtMachine " + ns + "/" + kvmName + " has no owner Machine");
    }
    Optional<Machine> machine = Optional.empty();
    if (owner.isPresent()) {
      machine = machines.get(ns, owner.get(), unavailable);
    }
    return new MachineContract.Facts(ref.toString(), cluster, kvm, machine, unavailable);
  }

  /** One kind: its informer cache, else one GET. */
  private record Source<T extends KubernetesObject>(
      String kind, CachedObjects<T> cache, GenericKubernetesApi<T, ?> api) {

    /** The cached object, else one GET; a 404 or 403 is named in {@code unavailable}. */
    Optional<T> get(String ns, String name, List<String> unavailable) throws GuestAccessException {
      Optional<T> hit = cache.find(ns, name);
      if (hit.isPresent()) {
        return hit;
      }
      String what = kind + " " + ns + "/" + name;
      KubernetesApiResponse<T> r;
      try {
        r = api.get(ns, name);
      } catch (IllegalStateException e) { // GenericKubernetesApi's way of saying "I/O failure"
        throw new GuestAccessException(
            GuestAccessException.Reason.InfraAPIError, "reading " + what + " failed: no response");
      }
      int code = r.getHttpStatusCode();
      if (code >= 200 && code < 300 && r.getObject() != null) {
        return Optional.of(r.getObject());
      }
      if (code == 404 || code == 403) {
        unavailable.add(
            code == 404
                ? what + " not found"
                : "not allowed to read " + what + " (the controller's RBAC)");
        return Optional.empty();
      }
      throw new GuestAccessException(
          GuestAccessException.Reason.InfraAPIError, "reading " + what + " failed: HTTP " + code);
    }
  }
}
