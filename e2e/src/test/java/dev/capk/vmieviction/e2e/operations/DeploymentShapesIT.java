package dev.capk.vmieviction.e2e.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.e2e.reliability.ShippedRbacEvacuation;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.ControllerServiceAccount;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The deployment shapes of config/, rendered by the real kubectl's kustomize and applied
 * server-side to a real API server: the standalone base (config/default), the controller as a
 * container of CAPK's manager Deployment (config/capk-sidecar on a minimal rendering of CAPK's
 * manifests, config/samples/capk-sidecar), each with and without the NodeMaintenance component. The
 * sidecar shape then runs an evacuation end to end: the built jar started with exactly the rendered
 * container's args and env, authenticated as CAPK's ServiceAccount with only the RBAC the shape
 * binds to it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DeploymentShapesIT {
  // Its own infra cluster: the shapes bind cluster-wide RBAC.
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("shapes-infra");

  @RegisterExtension
  static final LocalClusterExtension guestA = LocalClusterExtension.shared("e2e-guest-a");

  static final String CAPK_NAMESPACE = "capk-system";
  static final String CAPK_SERVICE_ACCOUNT = "capk-manager";
  static final String CAPK_DEPLOYMENT = "capk-controller-manager";
  static final String SIDECAR = "vmi-eviction-controller";

  /** CAPK's manager serves metrics on localhost:8080 by default, a port no container declares. */
  static final int CAPK_METRICS_PORT = 8080;

  private static String standalone;
  private static String standaloneWithNodeMaintenance;
  private static String sidecar;
  private static String sidecarWithNodeMaintenance;
  private static EvacuationWorld world;
  private static ControllerProcess controller;

  @BeforeAll
  static void render() throws IOException {
    standalone = kustomize(RepoPaths.root().resolve("config/default"));
    standaloneWithNodeMaintenance = kustomize(defaultWithNodeMaintenance());
    sidecar = kustomize(RepoPaths.root().resolve("config/samples/capk-sidecar"));
    sidecarWithNodeMaintenance =
        kustomize(RepoPaths.root().resolve("config/samples/capk-sidecar-node-maintenance"));
  }

  @AfterAll
  static void stop() {
    if (controller != null) controller.close();
    if (world != null) world.close();
    EvacuationWorld.stopStandIn(infra.cluster());
  }

  @Test
  @Order(1)
  void everyShapeAppliesServerSideToARealApiServer() {
    Kubectl k = infra.cluster().kubectl();
    // Created for real: the namespaces the NodeMaintenance variants' objects live in must exist
    // for their dry run. The sidecar comes last: its binding is the one the evacuation below uses.
    k.runOrFail(standalone, "apply", "--server-side", "-f", "-");
    k.runOrFail(sidecar, "apply", "--server-side", "-f", "-");
    for (String shape : List.of(standaloneWithNodeMaintenance, sidecarWithNodeMaintenance)) {
      String out = k.runOrFail(shape, "apply", "--server-side", "--dry-run=server", "-f", "-");
      assertTrue(out.contains("nodemaintenances.nodemaintenance.medik8s.io"), out);
    }

    assertEquals(
        "manager " + SIDECAR,
        k.runOrFail(
            null,
            "-n",
            CAPK_NAMESPACE,
            "get",
            "deployment",
            CAPK_DEPLOYMENT,
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}"),
        "the controller is a second container of CAPK's manager Deployment, as stored");
    assertEquals(
        CAPK_SERVICE_ACCOUNT,
        k.runOrFail(
            null,
            "get",
            "clusterrolebinding",
            ControllerServiceAccount.CLUSTER_ROLE,
            "-o",
            "jsonpath={.subjects[0].name}"));

    List<String> withNm = args(container(sidecarWithNodeMaintenance, CAPK_DEPLOYMENT, SIDECAR));
    assertTrue(withNm.contains("--enable-node-maintenance"), withNm.toString());
    assertFalse(
        args(container(sidecarWithNodeMaintenance, CAPK_DEPLOYMENT, "manager"))
            .contains("--enable-node-maintenance"));
    Map<String, Object> nmBinding =
        object(
            sidecarWithNodeMaintenance,
            "ClusterRoleBinding",
            "capk-vmi-eviction-controller-node-maintenance");
    assertEquals(
        Map.of("kind", "ServiceAccount", "name", CAPK_SERVICE_ACCOUNT, "namespace", CAPK_NAMESPACE),
        ((List<?>) nmBinding.get("subjects")).get(0));
    assertTrue(
        args(container(standaloneWithNodeMaintenance, "capk-vmi-eviction-controller", "manager"))
            .contains("--enable-node-maintenance"));
  }

  @Test
  @Order(2)
  @SuppressWarnings("unchecked")
  void sidecarIsTheStandaloneContainerWithPortsOfItsOwnAndTheSameClusterRole() {
    Map<String, Object> ours = container(sidecar, CAPK_DEPLOYMENT, SIDECAR);
    Map<String, Object> base = container(standalone, "capk-vmi-eviction-controller", "manager");
    assertEquals(withoutAddresses(args(base)), withoutAddresses(args(ours)));
    assertEquals(base.get("image"), ours.get("image"));
    assertEquals(base.get("env"), ours.get("env"));
    assertEquals(base.get("resources"), ours.get("resources"));

    Set<Integer> capkPorts = new HashSet<>(Set.of(CAPK_METRICS_PORT));
    for (Object c : containers(sidecar, CAPK_DEPLOYMENT)) {
      Map<String, Object> m = (Map<String, Object>) c;
      if (!SIDECAR.equals(m.get("name"))) {
        for (Object p : (List<Object>) m.getOrDefault("ports", List.of())) {
          capkPorts.add((Integer) ((Map<String, Object>) p).get("containerPort"));
        }
      }
    }
    Set<Integer> bound = new TreeSet<>();
    for (String a : args(ours)) {
      if (a.startsWith("--metrics-bind-address=") || a.startsWith("--health-probe-bind-address=")) {
        bound.add(Integer.parseInt(a.substring(a.lastIndexOf(':') + 1)));
      }
    }
    assertEquals(2, bound.size(), "metrics and probes on two ports: " + args(ours));
    for (int port : bound) {
      assertFalse(capkPorts.contains(port), port + " is one of CAPK's manager's " + capkPorts);
    }
    String metricsAddress =
        args(ours).stream().filter(a -> a.startsWith("--metrics-bind-address=")).findFirst().get();
    Map<String, Object> template =
        (Map<String, Object>)
            ((Map<String, Object>) object(sidecar, "Deployment", CAPK_DEPLOYMENT).get("spec"))
                .get("template");
    Map<String, Object> annotations =
        (Map<String, Object>) ((Map<String, Object>) template.get("metadata")).get("annotations");
    assertEquals(
        metricsAddress.substring(metricsAddress.lastIndexOf(':') + 1),
        annotations.get("prometheus.io/port"),
        "Prometheus' annotation discovery scrapes the controller's metrics port");

    assertEquals(
        object(standalone, "ClusterRole", ControllerServiceAccount.CLUSTER_ROLE).get("rules"),
        object(sidecar, "ClusterRole", ControllerServiceAccount.CLUSTER_ROLE).get("rules"),
        "the sidecar binds config/rbac's ClusterRole, not a copy");
  }

  @Test
  @Order(2)
  void theAlertRulesLandInTheNamespaceOfEachShape() {
    String standaloneRules = kustomize(RepoPaths.root().resolve("config/prometheus"));
    String sidecarRules = kustomize(RepoPaths.root().resolve("config/capk-sidecar/prometheus"));
    assertEquals(
        "capk-vmi-eviction-system",
        metadataOf(standaloneRules, "PrometheusRule").get("namespace"),
        "the standalone shape's namespace");
    assertEquals(
        "capk-system",
        metadataOf(sidecarRules, "PrometheusRule").get("namespace"),
        "the sidecar's: CAPK's namespace, where the controller runs");
    assertEquals(
        object(standaloneRules, "PrometheusRule", "capk-vmi-eviction-controller").get("spec"),
        object(sidecarRules, "PrometheusRule", "capk-vmi-eviction-controller").get("spec"),
        "the same rules");
  }

  @Test
  @Order(2)
  @SuppressWarnings("unchecked")
  void everyObjectOfTheSidecarShapeCarriesCapksProviderLabel() {
    for (String render : List.of(sidecar, sidecarWithNodeMaintenance)) {
      for (Object doc : new Yaml().loadAll(render)) {
        Map<String, Object> meta =
            (Map<String, Object>) ((Map<String, Object>) doc).get("metadata");
        Map<String, Object> labels = (Map<String, Object>) meta.getOrDefault("labels", Map.of());
        assertEquals(
            "kubevirt",
            labels.get("cluster.x-k8s.io/provider"),
            ((Map<String, Object>) doc).get("kind") + " " + meta.get("name"));
      }
    }
  }

  @Test
  @Order(2)
  void theClusterctlOverridesLayerIsTheSidecarShapeAtClusterctlsPath(@TempDir Path overrides)
      throws Exception {
    Path capk =
        RepoPaths.root()
            .resolve(
                "config/samples/capk-infrastructure-components/capk-infrastructure-components.yaml");
    Script run = capkOverrides(overrides, capk.toString(), "v0.11.2");
    assertEquals(0, run.code(), run.err());
    Path written =
        overrides.resolve("infrastructure-kubevirt/v0.11.2/infrastructure-components.yaml");
    assertEquals(written.toString(), run.out().strip(), "it prints the path it wrote");
    assertEquals(
        documents(sidecar),
        documents(Files.readString(written)),
        "what clusterctl installs is the sidecar shape applied to CAPK's components");

    Script missing = capkOverrides(overrides, "/no/such/components.yaml", "v0.11.3");
    assertEquals(2, missing.code());
    assertTrue(missing.err().contains("/no/such/components.yaml is not a file"), missing.err());
    Script badVersion = capkOverrides(overrides, capk.toString(), "0.11");
    assertEquals(2, badVersion.code());
    assertTrue(badVersion.err().contains("is not a release version"), badVersion.err());
    Script notCapk =
        capkOverrides(overrides, RepoPaths.root().resolve("README.md").toString(), "v0.11.4");
    assertEquals(2, notCapk.code());
    assertTrue(notCapk.err().contains("not CAPK's components"), notCapk.err());
    assertFalse(
        Files.exists(overrides.resolve("infrastructure-kubevirt/v0.11.3")),
        "nothing written for bad input");
  }

  private static List<Object> documents(String yaml) {
    List<Object> docs = new ArrayList<>();
    new Yaml().loadAll(yaml).forEach(docs::add);
    return docs;
  }

  record Script(int code, String out, String err) {}

  private static Script capkOverrides(Path overrides, String components, String version)
      throws Exception {
    return hackScript(
        infra.cluster(),
        Map.of("OVERRIDES_DIR", overrides.toString()),
        "capk-overrides.sh",
        components,
        version);
  }

  /** Runs hack/SCRIPT with ARGS, kubectl being the cluster's own (KUBECTL). */
  static Script hackScript(
      LocalCluster cluster, Map<String, String> env, String script, String... args)
      throws Exception {
    List<String> command =
        new ArrayList<>(List.of("bash", RepoPaths.root().resolve("hack/" + script).toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().putAll(env);
    pb.environment().put("KUBECTL", cluster.binaries().kubectl().toString());
    Process p = pb.start();
    // Read stderr beside stdout: a script that fills one pipe while we block on the other hangs.
    var err = java.util.concurrent.CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
    String out = readAll(p.getInputStream());
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "hack/" + script + " did not finish");
    return new Script(p.exitValue(), out, err.join());
  }

  private static String readAll(java.io.InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> metadataOf(String yaml, String kind) {
    return (Map<String, Object>) object(yaml, kind, "capk-vmi-eviction-controller").get("metadata");
  }

  @Test
  @Order(3)
  void sidecarShapeRunsAnEvacuationEndToEndAsCapksServiceAccount() throws IOException {
    world = EvacuationWorld.start(infra.cluster(), "shapes", 2);
    TenantCluster tenant = world.addTenant("a", guestA.cluster());
    world.addVmsOn(world.infraNodes().get(0), tenant, "External", "shapes-a-0");
    // A second guest node, where the drained node's pods can go.
    world.addVmsOn(world.infraNodes().get(1), tenant, "External", "shapes-a-1");
    tenant.deployProtectedWorkload("app", "svc", 2, 1);
    tenant.awaitAvailable("app", "svc", 2);

    Map<String, Object> rendered = container(sidecar, CAPK_DEPLOYMENT, SIDECAR);
    List<String> args = new ArrayList<>(args(rendered));
    // What the pod has and a local process has not: the token of its ServiceAccount (here a
    // kubeconfig holding one) and the pod's namespace (where the leader-election Lease lives).
    args.add(
        "--kubeconfig="
            + ControllerServiceAccount.kubeconfig(
                infra.cluster(), CAPK_NAMESPACE, CAPK_SERVICE_ACCOUNT));
    args.add("--leader-election-namespace=" + CAPK_NAMESPACE);
    controller =
        ControllerProcess.startAsContainer(
            "capk-sidecar", infra.cluster().dir(), args, env(rendered));

    ShippedRbacEvacuation.assertCompletes(world, tenant, "shapes-a-0", controller, CAPK_NAMESPACE);

    // The alerts and the dashboard read only metrics this controller serves.
    Set<String> served = servedMetricNames(controller.metrics());
    Map<String, Set<String>> readers = new LinkedHashMap<>();
    for (Map<String, Object> rule : MonitoringFiles.rules()) {
      readers.put(
          "alert " + rule.get("alert"), MonitoringFiles.metricsIn((String) rule.get("expr")));
    }
    MonitoringFiles.dashboardQueries()
        .forEach(
            (panel, exprs) -> {
              Set<String> names = new TreeSet<>();
              exprs.forEach(e -> names.addAll(MonitoringFiles.metricsIn(e)));
              readers.put("panel " + panel, names);
            });
    for (var reader : readers.entrySet()) {
      assertFalse(reader.getValue().isEmpty(), reader.getKey());
      for (String name : reader.getValue()) {
        assertTrue(served.contains(name), reader.getKey() + " reads " + name + ", not served");
      }
    }
  }

  /** Sample names and, from the TYPE lines, every name a family may be queried by. */
  static Set<String> servedMetricNames(String text) {
    Set<String> names = new TreeSet<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("# TYPE ")) {
        String[] f = line.split(" ");
        String name = f[2];
        names.add(name);
        switch (f[3]) {
          case "histogram" ->
              names.addAll(List.of(name + "_bucket", name + "_count", name + "_sum"));
          case "summary" -> names.addAll(List.of(name + "_count", name + "_sum"));
          case "counter" -> names.add(name.endsWith("_total") ? name : name + "_total");
          default -> {}
        }
      } else if (!line.isBlank() && !line.startsWith("#")) {
        names.add(line.split("[{ ]", 2)[0]);
      }
    }
    return names;
  }

  static String kustomize(Path dir) {
    return infra.cluster().kubectl().runOrFail(null, "kustomize", dir.toString());
  }

  /** config/default with the NodeMaintenance component, as its commented lines enable it. */
  static Path defaultWithNodeMaintenance() throws IOException {
    Path dir = RepoPaths.workDir().resolve("shapes/default-node-maintenance");
    Files.createDirectories(dir);
    Path config = RepoPaths.root().resolve("config").toAbsolutePath().normalize();
    // kustomize takes bases and components by relative path only
    Path relative = dir.toAbsolutePath().normalize().relativize(config);
    Files.writeString(
        dir.resolve("kustomization.yaml"),
        """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - %1$s/default
        components:
        - %1$s/components/node-maintenance
        """
            .formatted(relative));
    return dir;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(String rendered, String kind, String name) {
    for (Object doc : new Yaml().loadAll(rendered)) {
      Map<String, Object> m = (Map<String, Object>) doc;
      if (m != null
          && kind.equals(m.get("kind"))
          && name.equals(((Map<String, Object>) m.get("metadata")).get("name"))) {
        return m;
      }
    }
    throw new AssertionError("no " + kind + " " + name + " in the render");
  }

  @SuppressWarnings("unchecked")
  static List<Object> containers(String rendered, String deployment) {
    Map<String, Object> spec =
        (Map<String, Object>)
            ((Map<String, Object>)
                    ((Map<String, Object>) object(rendered, "Deployment", deployment).get("spec"))
                        .get("template"))
                .get("spec");
    return (List<Object>) spec.get("containers");
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> container(String rendered, String deployment, String name) {
    for (Object c : containers(rendered, deployment)) {
      if (name.equals(((Map<String, Object>) c).get("name"))) {
        return (Map<String, Object>) c;
      }
    }
    throw new AssertionError("no container " + name + " in Deployment " + deployment);
  }

  @SuppressWarnings("unchecked")
  static List<String> args(Map<String, Object> container) {
    return (List<String>) container.getOrDefault("args", List.of());
  }

  @SuppressWarnings("unchecked")
  static Map<String, String> env(Map<String, Object> container) {
    Map<String, String> env = new LinkedHashMap<>();
    for (Object e : (List<Object>) container.getOrDefault("env", List.of())) {
      Map<String, Object> m = (Map<String, Object>) e;
      env.put((String) m.get("name"), (String) m.get("value"));
    }
    return env;
  }

  static List<String> withoutAddresses(List<String> args) {
    return args.stream()
        .filter(a -> !a.startsWith("--metrics-bind-address=") && !a.startsWith("--health-probe-"))
        .toList();
  }
}
