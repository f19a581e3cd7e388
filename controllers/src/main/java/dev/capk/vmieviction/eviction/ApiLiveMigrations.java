package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigrationList;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.CreateOptions;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.util.List;

/** {@link LiveMigrations} through the infra API server: a label-selected list, create, delete. */
public final class ApiLiveMigrations implements LiveMigrations {

  private final GenericKubernetesApi<
          VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationList>
      api;

  public ApiLiveMigrations(ApiClient infra) {
    this.api =
        new GenericKubernetesApi<>(
            VirtualMachineInstanceMigration.class,
            VirtualMachineInstanceMigrationList.class,
            KubeVirtApi.GROUP,
            KubeVirtApi.VERSION,
            KubeVirtApi.MIGRATION_PLURAL,
            infra);
  }

  @Override
  public List<VirtualMachineInstanceMigration> ours() throws ApiException {
    ListOptions options = new ListOptions();
    options.setLabelSelector(EvictionAnnotations.MIGRATION_OWNED_LABEL);
    VirtualMachineInstanceMigrationList list =
        ApiInfraVmis.call(() -> api.list(options)).throwsApiException().getObject();
    return list == null || list.getItems() == null ? List.of() : list.getItems();
  }

  @Override
  public boolean create(VirtualMachineInstanceMigration migration) throws ApiException {
    CreateOptions options = new CreateOptions();
    options.setFieldManager(ApiInfraVmis.FIELD_MANAGER);
    KubernetesApiResponse<VirtualMachineInstanceMigration> r =
        ApiInfraVmis.call(() -> api.create(migration, options));
    if (r.getHttpStatusCode() == 409) {
      return false; // AlreadyExists: the deterministic name says it is this very attempt
    }
    r.throwsApiException();
    return true;
  }

  @Override
  public void delete(String namespace, String name) throws ApiException {
    KubernetesApiResponse<VirtualMachineInstanceMigration> r =
        ApiInfraVmis.call(() -> api.delete(namespace, name));
    if (r.getHttpStatusCode() == 404) {
      return;
    }
    r.throwsApiException();
  }
}
