package dev.capk.vmieviction.e2e.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.operations.DeploymentShapesIT.Script;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * clusterctl's overrides layer written from CAPK's real release: CAPK's own config/ at the version
 * of hack/versions.env (its Go module, through the Go module proxy), rendered as CAPK's release
 * target does (hack/capk-release.sh), then given the sidecar by hack/capk-overrides.sh. The layer
 * keeps every object of CAPK's release as it is (its manager container too), adds only objects
 * carrying CAPK's provider label, applies server-side to a real API server, and the controller's
 * requests are allowed to CAPK's ServiceAccount by the layer's own RBAC once CAPK's binding is
 * gone.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CapkReleaseOverridesIT {
  // Its own API server: CAPK's CRDs replace the test CRDs and its RBAC is cluster-wide.
  @RegisterExtension
  static final LocalClusterExtension management =
      LocalClusterExtension.shared("capk-release", b -> b);

  static final String PROVIDER_LABEL = "cluster.x-k8s.io/provider";
  static final String SIDECAR = "vmi-eviction-controller";
  static final String CAPK_SERVICE_ACCOUNT = "system:serviceaccount:capk-system:capk-manager";

  /**
   * cert-manager's kinds CAPK's release uses (its serving Certificate and Issuer), as stand-ins
   * that accept any spec: cert-manager itself does not run here, and only the kinds must exist.
   */
  static final String CERT_MANAGER_KINDS =
      """
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata: {name: certificates.cert-manager.io}
      spec:
        group: cert-manager.io
        scope: Namespaced
        names: {kind: Certificate, plural: certificates, singular: certificate, listKind: CertificateList}
        versions:
        - name: v1
          served: true
          storage: true
          schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
      ---
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata: {name: issuers.cert-manager.io}
      spec:
        group: cert-manager.io
        scope: Namespaced
        names: {kind: Issuer, plural: issuers, singular: issuer, listKind: IssuerList}
        versions:
        - name: v1
          served: true
          storage: true
          schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
      """;

  private static String release;
  private static String layer;

  @BeforeAll
  static void render(@TempDir Path overrides) throws Exception {
    Script capk = DeploymentShapesIT.hackScript(management.cluster(), Map.of(), "capk-release.sh");
    assertEquals(0, capk.code(), capk.err());
    Path releaseFile = Path.of(capk.out().strip().lines().reduce((a, b) -> b).orElseThrow());
    release = Files.readString(releaseFile);
    String version = releaseFile.getParent().getFileName().toString().replaceFirst("^capk-", "");
    Script written =
        DeploymentShapesIT.hackScript(
            management.cluster(),
            Map.of("OVERRIDES_DIR", overrides.toString()),
            "capk-overrides.sh",
            releaseFile.toString(),
            version);
    assertEquals(0, written.code(), written.err());
    layer = Files.readString(Path.of(written.out().strip()));
  }

  @Test
  @Order(1)
  void theLayerIsCapksReleaseUnchangedPlusTheSidecarAndObjectsWithCapksProviderLabel() {
    Map<String, Map<String, Object>> capk = byKey(release);
    Map<String, Map<String, Object>> ours = byKey(layer);
    assertTrue(
        capk.size() > 10 && capk.containsKey("Deployment/capk-system/capk-controller-manager"),
        "CAPK's release rendered: " + capk.keySet());
    for (var e : capk.entrySet()) {
      assertTrue(ours.containsKey(e.getKey()), "the layer keeps CAPK's " + e.getKey());
      if (!e.getKey().startsWith("Deployment/")) {
        assertEquals(e.getValue(), ours.get(e.getKey()), "CAPK's " + e.getKey() + " unchanged");
      }
    }
    String deployment = "Deployment/capk-system/capk-controller-manager";
    List<Map<String, Object>> capkContainers = containers(capk.get(deployment));
    List<Map<String, Object>> layerContainers = containers(ours.get(deployment));
    assertEquals(capkContainers.size() + 1, layerContainers.size(), "one container added");
    assertEquals(
        capkContainers,
        layerContainers.subList(0, capkContainers.size()),
        "CAPK's manager container as released, and first");
    assertEquals(SIDECAR, layerContainers.get(capkContainers.size()).get("name"));

    List<String> added = new ArrayList<>();
    for (var e : ours.entrySet()) {
      if (!capk.containsKey(e.getKey())) {
        added.add(e.getKey());
        assertEquals(
            "kubevirt",
            labels(e.getValue()).get(PROVIDER_LABEL),
            e.getKey() + " " + PROVIDER_LABEL);
      }
    }
    assertTrue(
        added.contains("ClusterRole//capk-vmi-eviction-controller")
            && added.contains("ClusterRoleBinding//capk-vmi-eviction-controller"),
        "the layer adds the controller's RBAC: " + added);
  }

  @Test
  @Order(2)
  void theLayerAppliesServerSideAndItsOwnRbacAllowsTheControllersRequestsWithoutCapksRole() {
    Kubectl k = management.cluster().kubectl();
    // KubeVirt's kinds, as on a real infra cluster (kubectl auth can-i resolves resource names by
    // discovery), then the layer's CRDs (CAPK's own) over the test CRDs of the same names.
    Crds.installTestCrds(management.cluster());
    k.runOrFail(CERT_MANAGER_KINDS, "apply", "--server-side", "-f", "-");
    k.runOrFail(
        null,
        "wait",
        "--for=condition=Established",
        "crd/certificates.cert-manager.io",
        "crd/issuers.cert-manager.io");
    k.runOrFail(layer, "apply", "--server-side", "--force-conflicts", "-f", "-");
    assertEquals(
        "manager " + SIDECAR,
        k.runOrFail(
            null,
            "-n",
            "capk-system",
            "get",
            "deployment",
            "capk-controller-manager",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}"),
        "as stored");

    // The API server's authorizer follows RBAC objects through its own watch: wait until it
    // knows the layer's binding (CAPK's role has no list on VMIs).
    List<String> listVmis = List.of("list", "virtualmachineinstances.kubevirt.io");
    Await.until(
        "the layer's ClusterRoleBinding in force",
        Duration.ofSeconds(30),
        () -> "yes".equals(canI(k, listVmis, "--all-namespaces")));
    // CAPK's own role grants some of the same requests: remove its binding, so that what is
    // allowed below is allowed by the layer's RBAC alone.
    k.runOrFail(null, "delete", "clusterrolebinding", capkClusterRoleBinding());
    List<String> capkOnly = List.of("update", "kubevirtmachines.infrastructure.cluster.x-k8s.io");
    Await.until(
        "CAPK's ClusterRoleBinding gone from the authorizer",
        Duration.ofSeconds(30),
        () -> "no".equals(canI(k, capkOnly, "--all-namespaces")));
    for (List<String> request :
        List.of(
            listVmis,
            List.of("watch", "virtualmachineinstances.kubevirt.io"),
            List.of("patch", "virtualmachineinstances.kubevirt.io"),
            List.of("delete", "virtualmachineinstances.kubevirt.io"),
            List.of("create", "virtualmachineinstancemigrations.kubevirt.io"),
            List.of("list", "kubevirts.kubevirt.io"),
            List.of("watch", "clusters.cluster.x-k8s.io"),
            List.of("get", "machines.cluster.x-k8s.io"),
            List.of("watch", "kubevirtmachines.infrastructure.cluster.x-k8s.io"),
            List.of("watch", "kubevirtclusters.infrastructure.cluster.x-k8s.io"),
            List.of("watch", "secrets"),
            List.of("create", "events"),
            List.of("patch", "events"))) {
      assertEquals("yes", canI(k, request, "--all-namespaces"), String.join(" ", request));
    }
    assertEquals(
        "yes",
        canI(k, List.of("update", "leases.coordination.k8s.io"), "-n", "capk-system"),
        "the controller's leader-election Lease in CAPK's namespace");
    assertEquals(
        "no",
        canI(k, List.of("patch", "nodes"), "--all-namespaces"),
        "without the NodeMaintenance component, no node writes");
  }

  /**
   * CAPK's ClusterRoleBinding (its release has one), found in the release, not by a guessed name.
   */
  private static String capkClusterRoleBinding() {
    for (var e : byKey(release).entrySet()) {
      Map<String, Object> o = e.getValue();
      if ("ClusterRoleBinding".equals(o.get("kind"))) {
        return (String) metadata(o).get("name");
      }
    }
    throw new AssertionError("CAPK's release has no ClusterRoleBinding");
  }

  private static String canI(Kubectl k, List<String> request, String... scope) {
    List<String> args = new ArrayList<>(List.of("auth", "can-i"));
    args.addAll(request);
    args.addAll(List.of(scope));
    args.add("--as=" + CAPK_SERVICE_ACCOUNT);
    // kubectl auth can-i prints "no" and exits 1 when the request would be refused.
    Kubectl.Result r = k.run(null, Duration.ofSeconds(10), args.toArray(String[]::new));
    assertFalse(r.stdout().isBlank(), "can-i answered: " + r.stderr());
    return r.stdout().strip();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Map<String, Object>> byKey(String yaml) {
    Map<String, Map<String, Object>> objects = new LinkedHashMap<>();
    for (Object doc : new Yaml().loadAll(yaml)) {
      if (doc instanceof Map<?, ?> m) {
        Map<String, Object> o = (Map<String, Object>) m;
        Map<String, Object> meta = metadata(o);
        objects.put(
            o.get("kind") + "/" + meta.getOrDefault("namespace", "") + "/" + meta.get("name"), o);
      }
    }
    return objects;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> metadata(Map<String, Object> o) {
    return (Map<String, Object>) o.get("metadata");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> labels(Map<String, Object> o) {
    return (Map<String, Object>) metadata(o).getOrDefault("labels", Map.of());
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> containers(Map<String, Object> deployment) {
    Map<String, Object> spec = (Map<String, Object>) deployment.get("spec");
    Map<String, Object> template = (Map<String, Object>) spec.get("template");
    return (List<Map<String, Object>>)
        ((Map<String, Object>) template.get("spec")).get("containers");
  }
}
