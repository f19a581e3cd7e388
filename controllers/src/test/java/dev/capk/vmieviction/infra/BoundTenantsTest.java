package dev.capk.vmieviction.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClusterRef;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A VMI seen in an infra namespace maps only to a Cluster bound there; any other is refused. */
class BoundTenantsTest {

  static VirtualMachineInstance vmi(String cluster, String machineNamespace) {
    Map<String, String> labels = new HashMap<>();
    if (cluster != null) {
      labels.put("cluster.x-k8s.io/cluster-name", cluster);
    }
    if (machineNamespace != null) {
      labels.put("capk.cluster.x-k8s.io/kubevirt-machine-namespace", machineNamespace);
    }
    VirtualMachineInstance v = new VirtualMachineInstance();
    v.setMetadata(new V1ObjectMeta().namespace("vms").name("vm-1").labels(labels));
    return v;
  }

  /** Bound Clusters, the VMI's labels, and the Cluster it maps to (empty: refused). */
  record Row(
      Set<GuestClusterRef> bound,
      String cluster,
      String namespace,
      Optional<GuestClusterRef> maps) {}

  static InfraBindings.Bound bound(Set<GuestClusterRef> clusters) {
    return new InfraBindings.Bound(clusters, List.of());
  }

  static final GuestClusterRef A = new GuestClusterRef("tenant-a", "web");
  static final GuestClusterRef B = new GuestClusterRef("tenant-b", "web");
  static final GuestClusterRef C = new GuestClusterRef("tenant-c", "db");

  @Test
  void labelsChooseOnlyAmongTheBoundClusters() {
    List<Row> rows =
        List.of(
            new Row(Set.of(A), "web", "tenant-a", Optional.of(A)),
            new Row(Set.of(A), "web", null, Optional.of(A)),
            new Row(Set.of(A, C), "db", "tenant-c", Optional.of(C)),
            new Row(Set.of(A, B), "web", "tenant-b", Optional.of(B)),
            // Names a Cluster bound elsewhere, or nowhere: refused.
            new Row(Set.of(A), "web", "tenant-b", Optional.empty()),
            new Row(Set.of(A), "db", "tenant-a", Optional.empty()),
            new Row(Set.of(A), "db", null, Optional.empty()),
            new Row(Set.of(), "web", "tenant-a", Optional.empty()),
            // No cluster label, or two bound Clusters of that name and no namespace label.
            new Row(Set.of(A), null, "tenant-a", Optional.empty()),
            new Row(Set.of(A, B), "web", null, Optional.empty()));
    for (Row row : rows) {
      BoundTenants tenants = new BoundTenants("infra Secret x/y namespace vms", bound(row.bound()));
      VirtualMachineInstance v = vmi(row.cluster(), row.namespace());
      String what = row.toString();
      assertEquals(row.maps().isEmpty(), tenants.refusal(v).isPresent(), what);
      if (row.maps().isPresent()) {
        try {
          assertEquals(row.maps().get(), tenants.clusterOf(v), what);
        } catch (GuestAccessException e) {
          throw new AssertionError(what + ": " + e.getMessage());
        }
      } else {
        try {
          tenants.clusterOf(v);
          throw new AssertionError(what + ": mapped");
        } catch (GuestAccessException e) {
          assertEquals(GuestAccessException.Reason.InfraClusterMismatch, e.reason(), what);
          assertTrue(e.getMessage().contains("infra Secret x/y namespace vms"), e.getMessage());
        }
      }
    }
  }

  @Test
  void rebindingChangesTheAnswerAtOnce() {
    BoundTenants tenants = new BoundTenants("here", bound(Set.of(A)));
    VirtualMachineInstance v = vmi("db", "tenant-c");
    assertTrue(tenants.refusal(v).isPresent());
    tenants.rebind(bound(Set.of(A, C)));
    assertEquals(Optional.empty(), tenants.refusal(v));
    tenants.rebind(bound(Set.of()));
    assertTrue(tenants.refusal(v).isPresent());
  }
}
