package dev.capk.vmieviction.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kubernetes.client.openapi.models.V1APIGroup;
import io.kubernetes.client.openapi.models.V1APIGroupList;
import io.kubernetes.client.openapi.models.V1GroupVersionForDiscovery;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which version of cluster.x-k8s.io a discovery answer makes us read. */
class ManagementApisTest {

  static V1APIGroup group(String name, String... versions) {
    V1APIGroup g = new V1APIGroup().name(name);
    for (String v : versions) {
      g.addVersionsItem(new V1GroupVersionForDiscovery().groupVersion(name + "/" + v).version(v));
    }
    return g;
  }

  static String read(V1APIGroup... groups) {
    return ManagementApis.preferred(new V1APIGroupList().groups(List.of(groups)));
  }

  @Test
  void theNewestOfTheTwoWeReadThatTheServerServes() {
    assertEquals("v1beta2", read(group("cluster.x-k8s.io", "v1beta2", "v1beta1")));
    assertEquals("v1beta2", read(group("cluster.x-k8s.io", "v1beta1", "v1beta2")));
    assertEquals("v1beta1", read(group("cluster.x-k8s.io", "v1beta1")));
    assertEquals("v1beta2", read(group("cluster.x-k8s.io", "v1beta2")));
  }

  @Test
  void anotherGroupsVersionsCountForNothing() {
    assertEquals(
        "v1beta1",
        read(group("nodemaintenance.medik8s.io", "v1beta2"), group("cluster.x-k8s.io", "v1beta1")));
  }

  @Test
  void withoutTheGroupOrOneOfOurVersionsTheNewest() {
    assertEquals("v1beta2", read());
    assertEquals("v1beta2", read(group("cluster.x-k8s.io", "v1alpha4")));
  }
}
