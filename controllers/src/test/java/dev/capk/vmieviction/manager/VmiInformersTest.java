package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1ManagedFieldsEntry;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VmiInformersTest {

  /** Serves {@code total} VMIs in pages as the API server does, recording each request's options. */
  static final class PagingApi extends GenericKubernetesApi<VirtualMachineInstance, VirtualMachineInstanceList> {
    final int total;
    final List<ListOptions> requests = new ArrayList<>();

    PagingApi(int total) {
      super(VirtualMachineInstance.class, VirtualMachineInstanceList.class, KubeVirtApi.GROUP, KubeVirtApi.VERSION,
          KubeVirtApi.VMI_PLURAL, new io.kubernetes.client.openapi.ApiClient());
      this.total = total;
    }

    @Override
    public KubernetesApiResponse<VirtualMachineInstanceList> list(String namespace, ListOptions o) {
      requests.add(o);
      int from = o.getContinue() == null ? 0 : Integer.parseInt(o.getContinue());
      int to = Math.min(total, from + (o.getLimit() == null ? total : o.getLimit()));
      VirtualMachineInstanceList page = new VirtualMachineInstanceList();
      for (int i = from; i < to; i++) {
        VirtualMachineInstance vmi = new VirtualMachineInstance();
        vmi.setMetadata(new V1ObjectMeta().namespace(namespace).name("vmi-" + i).uid("u" + i)
            .managedFields(List.of(new V1ManagedFieldsEntry().manager("virt-controller"))));
        page.getItems().add(vmi);
      }
      page.setMetadata(new V1ListMeta().resourceVersion("4711")._continue(to < total ? String.valueOf(to) : null));
      return new KubernetesApiResponse<>(page);
    }
  }

  @Test
  void theInitialListIsReadInPagesOfAConsistentListAndKeepsNoManagedFields() throws Exception {
    PagingApi api = new PagingApi(1_234);
    CallGeneratorParams params = new CallGeneratorParams(false, "0", null);

    VirtualMachineInstanceList list = VmiInformers.listerWatcher(api, "tenants", "capk=yes").list(params);

    assertEquals(1_234, list.getItems().size());
    assertEquals("vmi-1233", list.getItems().get(1_233).getMetadata().getName());
    assertTrue(list.getItems().stream().allMatch(v -> v.getMetadata().getManagedFields() == null));
    assertEquals("4711", list.getMetadata().getResourceVersion());
    assertNull(list.getMetadata().getContinue());

    assertEquals(3, api.requests.size(), "1,234 VMIs in pages of " + VmiInformers.LIST_PAGE_SIZE);
    assertEquals(List.of("", "500", "1000"),
        api.requests.stream().map(o -> o.getContinue() == null ? "" : o.getContinue()).toList());
    for (ListOptions o : api.requests) {
      assertEquals(VmiInformers.LIST_PAGE_SIZE, o.getLimit());
      assertNull(o.getResourceVersion(), "resourceVersion 0 would be answered whole from the watch cache");
      assertEquals("capk=yes", o.getLabelSelector());
    }
  }

  @Test
  void trimmingKeepsExactlyWhatTheControllerReads() {
    VirtualMachineInstance vmi = new VirtualMachineInstance();
    vmi.setMetadata(new V1ObjectMeta().name("a").namespace("ns").uid("u").resourceVersion("7").generation(3L)
        .deletionTimestamp(java.time.OffsetDateTime.parse("2025-01-01T00:00:00Z"))
        .putLabelsItem("cluster.x-k8s.io/cluster-name", new String("c"))
        .putLabelsItem("capk.cluster.x-k8s.io/kubevirt-machine-namespace", "tenants")
        .putLabelsItem("kubevirt.io/vm", "a")
        .putAnnotationsItem("capk.cluster.x-k8s.io/vmi-drain-start-time", "t")
        .putAnnotationsItem("capk.cluster.x-k8s.io/vmi-deletion-grace-time", "g")
        .putAnnotationsItem("kubevirt.io/latest-observed-api-version", "v1")
        .addFinalizersItem("kubevirt.io/virtualMachineControllerFinalize")
        .addOwnerReferencesItem(new io.kubernetes.client.openapi.models.V1OwnerReference().name("a").kind("VirtualMachine"))
        .managedFields(List.of(new V1ManagedFieldsEntry().manager("m"))));

    V1ObjectMeta m = VmiInformers.trim(vmi).getMetadata();

    assertEquals(List.of("a", "ns", "u", "7"), List.of(m.getName(), m.getNamespace(), m.getUid(), m.getResourceVersion()));
    assertEquals(java.time.OffsetDateTime.parse("2025-01-01T00:00:00Z"), m.getDeletionTimestamp());
    assertEquals(java.util.Map.of("cluster.x-k8s.io/cluster-name", "c",
        "capk.cluster.x-k8s.io/kubevirt-machine-namespace", "tenants"), m.getLabels());
    assertEquals(java.util.Map.of("capk.cluster.x-k8s.io/vmi-drain-start-time", "t",
        "capk.cluster.x-k8s.io/vmi-deletion-grace-time", "g"), m.getAnnotations());
    assertTrue(m.getManagedFields() == null || m.getManagedFields().isEmpty());
    assertTrue(m.getFinalizers() == null || m.getFinalizers().isEmpty());
    assertTrue(m.getOwnerReferences() == null || m.getOwnerReferences().isEmpty());
    assertNull(m.getGeneration());
    assertTrue(m.getLabels().get("cluster.x-k8s.io/cluster-name") == "c".intern(), "cluster names are shared");
  }

  @Test
  void aVmiWithoutLabelsOrAnnotationsStaysWithout() {
    VirtualMachineInstance vmi = new VirtualMachineInstance();
    vmi.setMetadata(new V1ObjectMeta().name("a").namespace("ns").labels(null).annotations(null));
    V1ObjectMeta m = VmiInformers.trim(vmi).getMetadata();
    assertNull(m.getLabels());
    assertNull(m.getAnnotations());
  }
}
