package dev.capk.vmieviction.e2e.integration.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.workload.ManagementApis;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.ClientBuilder;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which version of cluster.x-k8s.io the manager reads when no flag says (discovery, one request),
 * against a real API server as Cluster API's CRDs make it serve one version, then both: v1beta1
 * when that is all it serves, v1beta2 as soon as it serves that too. The rest of the suite runs on
 * the test CRDs, which serve both: every other test reads v1beta2.
 */
class ClusterApiVersionIT {
  // Its own API server: this test changes the Cluster CRD that other tests' servers keep.
  @RegisterExtension
  static final LocalClusterExtension capi = LocalClusterExtension.shared("capi", b -> b);

  @Test
  void v1beta1WhenThatIsAllTheServerServesAndV1beta2OnceItServesThatToo() throws Exception {
    ApiClient client = capi.cluster().client();
    assertEquals(ClusterApi.V1BETA2, discovered(client), "no such group: the newest, v1beta2");

    String both = Files.readString(Crds.testCrdDir().resolve("cluster.x-k8s.io_clusters.yaml"));
    String v1beta1Only = both.substring(0, both.indexOf("  - name: v1beta2"));
    applyAndAwaitDiscovered(client, v1beta1Only, ClusterApi.V1BETA1);
    assertEquals(ClusterApi.V1BETA2, ManagementApis.clusterApiVersion(client, "v1beta2", 1));

    applyAndAwaitDiscovered(client, both, ClusterApi.V1BETA2);
    assertEquals(ClusterApi.V1BETA1, ManagementApis.clusterApiVersion(client, "v1beta1", 1));
  }

  /** Applies the CRD {@code yaml}, then waits until discovery picks {@code version}. */
  private static void applyAndAwaitDiscovered(ApiClient client, String yaml, String version) {
    capi.cluster().kubectl().runOrFail(yaml, "apply", "--server-side", "-f", "-");
    Await.until(
        "discovery picks cluster.x-k8s.io/" + version,
        Duration.ofSeconds(30),
        () -> discovered(client).equals(version));
  }

  /** No answer is not "not served": discovery is tried again, then the failure is the caller's. */
  @Test
  void anUnreachableServerIsAnErrorNotADefault() {
    ApiClient nobody = new ClientBuilder().setBasePath("https://127.0.0.1:1").build();
    assertThrows(ApiException.class, () -> ManagementApis.clusterApiVersion(nobody, "", 2));
  }

  private static String discovered(ApiClient client) throws Exception {
    return ManagementApis.clusterApiVersion(client, "", 1);
  }
}
