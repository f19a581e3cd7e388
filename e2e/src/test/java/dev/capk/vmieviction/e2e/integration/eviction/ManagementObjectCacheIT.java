package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A VMI's Cluster, KubevirtMachine and Machine are read at every evacuation step; with the shipped
 * RBAC they come from informer caches (no GET), and a controller whose RBAC lacks list/watch on
 * them still becomes ready and evacuates, reading them with GETs; one that may not read Machines
 * and KubevirtMachines at all drains as before Cluster API's contract was read, with one Warning.
 * Requests are counted by the infra API server itself ({@code apiserver_request_total}); nothing
 * else reads these kinds meanwhile.
 */
class ManagementObjectCacheIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  /** The infra kinds an evacuation reads: the management objects and the kubeconfig Secret. */
  static final Set<String> READ_KINDS =
      Set.of("clusters", "machines", "kubevirtmachines", "secrets");

  Manager manager;

  @Test
  void withTheShippedRbacAnEvacuationReadsNoClusterMachineKubevirtMachineOrSecretFromTheApi()
      throws Exception {
    Path kubeconfig = world.controllerKubeconfig();
    String ns = world.tenant("cache-hit");
    startController(kubeconfig, ns);
    Await.until("the management caches synced", WAIT, manager::managementCachesSynced);

    Vmi vmi = vmiWithPodsOnItsGuestNode(ns);
    Map<String, Double> before = getsOfManagementObjects();
    evacuate(world.infra(), ns, vmi.name(), "infra-node-1");
    awaitDeleted(world.infra(), ns, vmi.name(), vmi.uid());
    Map<String, Double> during = minus(getsOfManagementObjects(), before);

    assertEquals(
        Map.of("clusters", 0.0, "kubevirtmachines", 0.0, "machines", 0.0, "secrets", 0.0),
        during,
        "GETs of the VMI's management objects and kubeconfig Secret during its evacuation");
  }

  @Test
  void aRotatedKubeconfigSecretIsUsedAtOnceNotAtTheDrainsNextRetry() throws Exception {
    Path kubeconfig = world.controllerKubeconfig();
    String ns = world.tenant("rotated");
    // Retries of a refused eviction: 5 s, 10 s, 20 s, then up to a minute apart.
    startController(kubeconfig, ns, "--drain-retry-interval", "60s");
    Await.until("the management caches synced", WAIT, manager::managementCachesSynced);

    // The guest node's pod is held by a budget that never allows its eviction.
    String vm = unique("vm-rotated");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    workload(world.guest(), unique("held"), "held", 1, 1, List.of(vm));
    machine(ns, vm);
    vmi(world.infra(), ns, vm, "tenant", "External");
    double before = evictionRequests();
    evacuate(world.infra(), ns, vm, "infra-node-1");
    // Three refusals: the drain's next step is due some 20 s after the last one.
    Await.until("three refused evictions", WAIT, () -> evictionRequests() - before >= 3);

    // Rotated to a kubeconfig the policy refuses: only a client built from it says so.
    EvictionFixture.kubeconfigSecret(
        world.infra(),
        ns,
        "tenant",
        world
            .guest()
            .adminKubeconfigYaml()
            .replaceFirst("(?m)^(\\s*)server:", "$1insecure-skip-tls-verify: true\n$1server:"));

    Await.until(
        "KubeconfigInvalid, long before the drain's next retry",
        java.time.Duration.ofSeconds(8),
        () -> EvictionFixture.event(world.infra(), ns, vm, "KubeconfigInvalid").isPresent());
    String message =
        EvictionFixture.event(world.infra(), ns, vm, "KubeconfigInvalid").get().getMessage();
    assertTrue(message.contains("insecure-skip-tls-verify"), "names the field: " + message);
  }

  @Test
  void withoutListAndWatchOnThemOrOnSecretsTheControllerIsReadyAndEvacuatesByGets()
      throws Exception {
    world.controllerKubeconfig(); // the shipped role, to copy
    Path kubeconfig = kubeconfigWithoutListWatchOnManagementObjects();
    String ns = world.tenant("cache-off");
    startController(kubeconfig, ns);

    Vmi vmi = vmiWithPodsOnItsGuestNode(ns);
    Map<String, Double> before = getsOfManagementObjects();
    evacuate(world.infra(), ns, vmi.name(), "infra-node-1");
    awaitDeleted(world.infra(), ns, vmi.name(), vmi.uid());
    Map<String, Double> during = minus(getsOfManagementObjects(), before);

    assertFalse(manager.managementCachesSynced(), "the caches could not list");
    assertTrue(
        during.get("clusters") > 0
            && during.get("kubevirtmachines") > 0
            && during.get("secrets") > 0,
        "the objects were read with GETs instead: " + during);
  }

  @Test
  void withoutAnyRightOnMachinesAndKubevirtMachinesTheVmiIsDrainedAsBeforeWithOneWarning()
      throws Exception {
    world.controllerKubeconfig(); // the shipped role, to copy
    // Cluster API's contract unreadable: no verb on Machines and KubevirtMachines, only the get on
    // Clusters that the guest connection needed before the contract was read.
    Path kubeconfig =
        kubeconfigWithManagementRights(
            "capk-vmi-eviction-no-machines",
            Map.of(
                "clusters", List.of("get"), "machines", List.of(), "kubevirtmachines", List.of()));
    String ns = world.tenant("no-machines");
    startController(kubeconfig, ns);

    Vmi vmi = vmiWithPodsOnItsGuestNode(ns);
    evacuate(world.infra(), ns, vmi.name(), "infra-node-1");
    awaitDeleted(world.infra(), ns, vmi.name(), vmi.uid());
    // The outcome event is written right after the delete: drained, not held until the deadline.
    EvictionFixture.awaitEvent(world.infra(), ns, vmi.name(), "DrainSucceeded");

    List<CoreV1Event> events = EvictionFixture.events(world.infra(), ns, vmi.name());
    String seen =
        events.stream()
            .map(
                e ->
                    e.getType() + " " + e.getReason() + " x" + e.getCount() + ": " + e.getMessage())
            .collect(Collectors.joining("\n"));
    assertTrue(
        events.stream().anyMatch(e -> "DrainSucceeded".equals(e.getReason())),
        "drained, not held until the deadline:\n" + seen);
    List<CoreV1Event> unavailable =
        events.stream().filter(e -> "MachineContractUnavailable".equals(e.getReason())).toList();
    assertEquals(1, unavailable.size(), seen);
    CoreV1Event warning = unavailable.get(0);
    assertEquals("Warning", warning.getType());
    assertEquals(1, warning.getCount() == null ? 1 : warning.getCount(), "said once: " + seen);
    assertTrue(
        warning
            .getMessage()
            .contains("not allowed to read KubevirtMachine " + ns + "/" + vmi.name()),
        warning.getMessage());
    assertTrue(manager.ready(), "ready without the caches of what it may not list");
  }

  void startController(Path kubeconfig, String ns, String... more) throws Exception {
    manager = world.startController(kubeconfig, ns, more);
  }

  record Vmi(String name, String uid) {}

  /**
   * A VMI with its Machine and KubevirtMachine, whose guest node runs pods under a budget that lets
   * one go at a time: its evacuation takes several steps. Set up before requests are counted
   * (kubectl apply reads what it applies).
   */
  static Vmi vmiWithPodsOnItsGuestNode(String ns) throws Exception {
    String vm = unique("vm-cache");
    String other = unique("vm-other");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    world.guest().kwokNodes().createNamed(other, Map.of());
    workload(world.guest(), unique("web"), "web", 2, 1, List.of(vm, other));
    machine(ns, vm);
    return new Vmi(vm, vmi(world.infra(), ns, vm, "tenant", "External"));
  }

  /** The Machine and its KubevirtMachine behind VMI {@code name}, as CAPI and CAPK create them. */
  static void machine(String ns, String name) {
    EvictionFixture.machine(world.infra(), ns, "tenant", name);
  }

  /**
   * The shipped ClusterRole with only {@code get} on Clusters, Machines, KubevirtMachines and
   * Secrets (as before the caches), bound to a ServiceAccount of its own; a kubeconfig with its
   * token.
   */
  static Path kubeconfigWithoutListWatchOnManagementObjects() throws Exception {
    return kubeconfigWithManagementRights(
        "capk-vmi-eviction-no-list",
        Map.of(
            "clusters", List.of("get"),
            "machines", List.of("get"),
            "kubevirtmachines", List.of("get"),
            "secrets", List.of("get")));
  }

  /**
   * The shipped ClusterRole with {@code verbs} (none: no rule) on each kind named there (of {@link
   * #READ_KINDS}) instead of its own, as ClusterRole {@code name} bound to a ServiceAccount {@code
   * name}; a kubeconfig with its token.
   */
  static Path kubeconfigWithManagementRights(String name, Map<String, List<String>> verbs)
      throws Exception {
    String ns = EvictionFixture.CONTROLLER_NAMESPACE;
    JsonObject role =
        JsonParser.parseString(
                world.infraKubectl(
                    "get", "clusterrole", EvictionFixture.CONTROLLER_SA, "-o", "json"))
            .getAsJsonObject();
    JsonArray rules = new JsonArray();
    int reduced = 0;
    for (JsonElement r : role.getAsJsonArray("rules")) {
      JsonObject rule = r.getAsJsonObject();
      JsonArray others = new JsonArray();
      for (JsonElement res : rule.getAsJsonArray("resources")) {
        String kind = res.getAsString();
        if (!verbs.containsKey(kind)) {
          others.add(kind);
          continue;
        }
        reduced++;
        if (!verbs.get(kind).isEmpty()) {
          JsonObject own = rule.deepCopy();
          JsonArray one = new JsonArray();
          one.add(kind);
          own.add("resources", one);
          JsonArray allowed = new JsonArray();
          verbs.get(kind).forEach(allowed::add);
          own.add("verbs", allowed);
          rules.add(own);
        }
      }
      if (!others.isEmpty()) {
        rule.add("resources", others);
        rules.add(rule);
      }
    }
    assertEquals(verbs.size(), reduced, "the shipped role names the kinds to reduce");
    JsonObject copy = new JsonObject();
    copy.addProperty("apiVersion", "rbac.authorization.k8s.io/v1");
    copy.addProperty("kind", "ClusterRole");
    JsonObject meta = new JsonObject();
    meta.addProperty("name", name);
    copy.add("metadata", meta);
    copy.add("rules", rules);
    world.infraApply(copy.toString());
    world.infraApply(
        """
            apiVersion: v1
            kind: ServiceAccount
            metadata: {name: %1$s, namespace: %2$s}
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRoleBinding
            metadata: {name: %1$s}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %1$s}
            subjects: [{kind: ServiceAccount, name: %1$s, namespace: %2$s}]
            """
            .formatted(name, ns));
    AuthenticationV1TokenRequest issued =
        new CoreV1Api(world.infra().client())
            .createNamespacedServiceAccountToken(
                name,
                ns,
                new AuthenticationV1TokenRequest()
                    .spec(new V1TokenRequestSpec().expirationSeconds(3600L).audiences(List.of())))
            .execute();
    Path kubeconfig = world.dir().resolve(name + ".kubeconfig");
    Files.writeString(
        kubeconfig, world.infra().kubeconfigWithToken(name, issued.getStatus().getToken()));
    return kubeconfig;
  }

  private static final Pattern REQUESTS =
      Pattern.compile("(?m)^apiserver_request_total\\{([^}]*)} ([0-9.eE+]+)$");

  /** GET requests so far, by resource, as the infra API server counts them (every client). */
  static Map<String, Double> getsOfManagementObjects() {
    String metrics = world.infraKubectl("get", "--raw", "/metrics");
    Map<String, Double> gets = new TreeMap<>();
    READ_KINDS.forEach(k -> gets.put(k, 0.0));
    Matcher m = REQUESTS.matcher(metrics);
    while (m.find()) {
      String labels = m.group(1);
      if (!labels.contains("verb=\"GET\"")) {
        continue;
      }
      for (String kind : READ_KINDS) {
        if (labels.contains("resource=\"" + kind + "\"") && labels.contains("subresource=\"\"")) {
          gets.merge(kind, Double.parseDouble(m.group(2)), Double::sum);
        }
      }
    }
    return gets;
  }

  /** Evictions asked of the guest API server so far (every client; only the controller evicts). */
  static double evictionRequests() {
    return BudgetStatusWakeIT.evictionRequests(world.guest());
  }

  static Map<String, Double> minus(Map<String, Double> after, Map<String, Double> before) {
    Map<String, Double> d = new TreeMap<>();
    after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0.0)));
    return d;
  }
}
