package dev.capk.vmieviction.e2e.integration.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.infra.InfraBindings;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.util.PatchUtils;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * {@code --infra-clusters=external}: one controller, started against a management cluster (Cluster
 * API's objects and the tenants' Secrets), evacuates VMIs running in two other infra clusters,
 * reached through the Secrets that KubevirtClusters name; one guest cluster plays every tenant. The
 * management and infra clusters are API servers only (the tests write what KubeVirt, CAPI and CAPK
 * would), the guest runs kwok.
 */
class ExternalInfraIT {

  @RegisterExtension
  static final LocalClusterExtension managementExt =
      LocalClusterExtension.shared("ext-management", b -> b);

  @RegisterExtension
  static final LocalClusterExtension infra1Ext =
      LocalClusterExtension.shared("ext-infra-1", b -> b);

  @RegisterExtension
  static final LocalClusterExtension infra2Ext =
      LocalClusterExtension.shared("ext-infra-2", b -> b);

  @RegisterExtension
  static final LocalClusterExtension guestExt = LocalClusterExtension.shared("guest-a");

  static final Duration WAIT = Duration.ofSeconds(60);
  static final String DRAIN_START = "capk.cluster.x-k8s.io/vmi-drain-start-time";

  static LocalCluster management;
  static LocalCluster infra1;
  static LocalCluster infra2;
  static LocalCluster guest;

  Manager manager;
  Manager other; // a second replica, for sharding
  final List<String> namespaces = new ArrayList<>();
  ListAppender<ILoggingEvent> logs;

  @BeforeAll
  static void clusters() {
    management = managementExt.cluster();
    infra1 = infra1Ext.cluster();
    infra2 = infra2Ext.cluster();
    guest = guestExt.cluster();
    Crds.installTestCrds(management);
    Crds.installTestCrds(infra1);
    Crds.installTestCrds(infra2);
  }

  @AfterEach
  void stop() {
    for (Manager m : new Manager[] {manager, other}) {
      if (m != null) {
        m.close();
      }
    }
    if (logs != null) {
      ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
    }
    infra2.startApiServer(); // in case a test stopped it
  }

  @Test
  void aMarkedVmiInInfra1IsEvacuatedAndALookAlikeInAnUnboundInfra2IsUntouched() throws Exception {
    Tenant bound = tenant("bound", infra1, true);
    // Its KubevirtCluster names no infra Secret: its VMIs would run in the management cluster.
    Tenant local = tenant("local", infra2, false);
    String vm = unique("vm");
    String twin = unique("vm-twin");
    guest.kwokNodes().createNamed(vm, Map.of());
    guest.kwokNodes().createNamed(twin, Map.of());
    String uid = vmi(infra1, bound.infraNamespace(), vm, "tenant", bound.namespace());
    String twinUid = vmi(infra2, local.infraNamespace(), twin, "tenant", local.namespace());
    start();

    evacuate(infra2, local.infraNamespace(), twin);
    evacuate(infra1, bound.infraNamespace(), vm);
    Await.until(
        "VMI in infra 1 deleted", WAIT, () -> deleted(infra1, bound.infraNamespace(), vm, uid));

    assertTrue(unschedulable(vm), "guest node of the infra-1 VMI cordoned");
    assertTrue(event(infra1, bound.infraNamespace(), vm, "DrainSucceeded").isPresent());
    CoreV1Event onMachine = awaitEvent(management, bound.namespace(), vm, "DrainSucceeded");
    assertTrue(
        onMachine.getMessage().contains(bound.infraNamespace() + "/" + vm),
        "the KubevirtMachine's event names the infra VMI: " + onMachine.getMessage());
    Map<String, Object> other = get(infra2, local.infraNamespace(), twin).orElseThrow();
    assertEquals(twinUid, uid(other));
    assertEquals(Optional.empty(), annotation(other, DRAIN_START), "never touched");
    assertFalse(unschedulable(twin), "its guest node never cordoned");
  }

  @Test
  void aVmiLabelledForAClusterNotBoundToItsInfraIsRefusedAndNeverDrainedOrDeletedPastTheDeadline()
      throws Exception {
    Tenant bound = tenant("owner", infra1, true);
    // A real tenant, with a Cluster and a working kubeconfig, bound to infra 2 only.
    Tenant victim = tenant("victim", infra2, true);
    String intruder = unique("vm-intruder");
    guest.kwokNodes().createNamed(intruder, Map.of());
    // In infra 1, in the namespace bound to "owner", labelled as the victim's machine.
    String uid = vmi(infra1, bound.infraNamespace(), intruder, "tenant", victim.namespace());
    start("--drain-timeout", "3s");

    evacuate(infra1, bound.infraNamespace(), intruder);
    CoreV1Event refused =
        awaitEvent(infra1, bound.infraNamespace(), intruder, "InfraClusterMismatch");
    assertEquals("Warning", refused.getType());
    assertTrue(refused.getMessage().contains(victim.namespace() + "/tenant"), refused.getMessage());
    awaitEvent(management, bound.namespace(), "tenant", "InfraClusterMismatch");

    // Well past the 3 s deadline, after more looks (a status change wakes the VMI again).
    Thread.sleep(6_000);
    patchStatus(infra1, bound.infraNamespace(), intruder, "{\"status\":{\"phase\":\"Running\"}}");
    Thread.sleep(2_000);
    Map<String, Object> after = get(infra1, bound.infraNamespace(), intruder).orElseThrow();
    assertEquals(uid, uid(after), "never deleted");
    assertFalse(deleting(after), "never deleted");
    assertEquals(Optional.empty(), annotation(after, DRAIN_START), "never annotated");
    assertFalse(unschedulable(intruder), "the victim's guest node never cordoned");
  }

  @Test
  void anInfraSecretRotatedToABrokenKubeconfigAndBackIsReportedWithoutItsContentAndWorksAgain()
      throws Exception {
    captureLogs();
    Tenant t = tenant("rotated", infra1, true);
    start();
    String good = infra1.adminKubeconfigYaml();
    String broken =
        good.replaceFirst("(?m)^(\\s*)server:", "$1insecure-skip-tls-verify: true\n$1server:");
    infraSecret(t.namespace(), broken, t.infraNamespace());
    CoreV1Event invalid = awaitEvent(management, t.namespace(), "tenant", "InfraSecretInvalid");
    assertEquals("Warning", invalid.getType());
    assertTrue(invalid.getMessage().contains("insecure-skip-tls-verify"), invalid.getMessage());

    infraSecret(t.namespace(), good, t.infraNamespace());
    String vm = unique("vm-after-fix");
    guest.kwokNodes().createNamed(vm, Map.of());
    String uid = vmi(infra1, t.infraNamespace(), vm, "tenant", t.namespace());
    evacuate(infra1, t.infraNamespace(), vm);
    Await.until(
        "VMI evacuated after the fix", WAIT, () -> deleted(infra1, t.infraNamespace(), vm, uid));
    assertTrue(manager.ready(), "no crash: still ready");

    List<String> secretParts = secretParts(good);
    String logged =
        logs.list.stream()
            .map(ILoggingEvent::getFormattedMessage)
            .collect(Collectors.joining("\n"));
    String evented =
        events(management, t.namespace(), "tenant").stream()
            .map(CoreV1Event::getMessage)
            .collect(Collectors.joining("\n"));
    assertTrue(logged.contains("InfraSecretInvalid"), "the problem was logged");
    for (String part : secretParts) {
      assertFalse(logged.contains(part), "a secret value in the logs");
      assertFalse(evented.contains(part), "a secret value in the events");
    }
  }

  @Test
  void anInfraSecretReferenceAddedAtRunTimeIsServedWithoutARestart() throws Exception {
    Tenant t = tenant("added", infra1, false);
    String vm = unique("vm-added");
    guest.kwokNodes().createNamed(vm, Map.of());
    String uid = vmi(infra1, t.infraNamespace(), vm, "tenant", t.namespace());
    start();

    infraSecret(t.namespace(), infra1.adminKubeconfigYaml(), t.infraNamespace());
    management
        .kubectl()
        .runOrFail(
            null,
            "-n",
            t.namespace(),
            "patch",
            "kubevirtclusters.infrastructure.cluster.x-k8s.io",
            "tenant",
            "--type=merge",
            "-p",
            "{\"spec\":{\"infraClusterSecretRef\":{\"name\":\"infra\"}}}");
    evacuate(infra1, t.infraNamespace(), vm);
    Await.until(
        "VMI evacuated once its KubevirtCluster named the infra Secret",
        WAIT,
        () -> deleted(infra1, t.infraNamespace(), vm, uid));
    assertTrue(unschedulable(vm));
  }

  @Test
  void infra2sApiServerStoppedCostsInfra1sEvacuationNothing() throws Exception {
    Tenant one = tenant("one", infra1, true);
    Tenant two = tenant("two", infra2, true);
    String vm2 = unique("vm-two");
    vmi(infra2, two.infraNamespace(), vm2, "tenant", two.namespace());
    start();
    String infra2Endpoint = java.net.URI.create(infra2.serverUrl()).getAuthority();
    infra2.stopApiServer();
    String unreachable =
        awaitEvent(management, two.namespace(), "tenant", "InfraClusterUnreachable").getMessage();
    assertTrue(
        unreachable.contains("no answer: ") && unreachable.contains(" from " + infra2Endpoint),
        "names the server it could not reach: " + unreachable);

    String vm = unique("vm-one");
    guest.kwokNodes().createNamed(vm, Map.of());
    String uid = vmi(infra1, one.infraNamespace(), vm, "tenant", one.namespace());
    evacuate(infra1, one.infraNamespace(), vm);
    Await.until(
        "VMI in infra 1 evacuated", WAIT, () -> deleted(infra1, one.infraNamespace(), vm, uid));
    assertTrue(unschedulable(vm));
    assertTrue(manager.ready(), "an infra cluster that is down makes no replica unready");
  }

  @Test
  void twoShardedReplicasServeOneInfraClusterEachAndTheOneLeftServesBothAfterTheOtherStops()
      throws Exception {
    Tenant one = tenant("shard-one", infra1, true);
    Tenant two = tenant("shard-two", infra2, true);
    String leaseNs = unique("leases");
    namespace(management, leaseNs);
    String id = unique("capk-vmi-eviction");
    String[] sharded = {
      "--shard-infra-clusters",
      "--leader-election-namespace",
      leaseNs,
      "--leader-election-id",
      id,
      "--leader-election-lease-duration",
      "3s",
      "--leader-election-renew-deadline",
      "2s",
      "--leader-election-retry-period",
      "300ms",
      "--metrics-bind-address",
      "127.0.0.1:0"
    };
    start(sharded);
    Manager first = manager;
    start(sharded);
    other = manager;
    manager = first;
    String key1 = InfraBindings.infraClusterKey(infra1.adminKubeconfigYaml());
    String key2 = InfraBindings.infraClusterKey(infra2.adminKubeconfigYaml());
    Set<String> identities = Set.of(manager.identity(), other.identity());
    Await.until(
        "each infra cluster's Lease held, by a different replica",
        WAIT,
        () -> {
          String h1 = holder(leaseNs, id, key1);
          String h2 = holder(leaseNs, id, key2);
          return identities.contains(h1) && identities.contains(h2) && !h1.equals(h2);
        });
    Manager holderOf2 = holder(leaseNs, id, key2).equals(manager.identity()) ? manager : other;
    Manager holderOf1 = holderOf2 == manager ? other : manager;
    String gauge = "vmi_eviction_infra_cluster_owned{infra_cluster=\"%s\"} 1";
    Await.until(
        "each replica's gauge names its infra cluster only",
        WAIT,
        () ->
            metrics(holderOf1).contains(gauge.formatted(key1))
                && !metrics(holderOf1).contains(gauge.formatted(key2))
                && metrics(holderOf2).contains(gauge.formatted(key2)));

    String vm1 = unique("vm-shard-one");
    guest.kwokNodes().createNamed(vm1, Map.of());
    String uid1 = vmi(infra1, one.infraNamespace(), vm1, "tenant", one.namespace());
    evacuate(infra1, one.infraNamespace(), vm1);
    Await.until(
        "VMI in infra 1 evacuated", WAIT, () -> deleted(infra1, one.infraNamespace(), vm1, uid1));

    // The holder of infra 2 stops: the replica left serves infra 2 too.
    holderOf2.close();
    String vm2 = unique("vm-shard-two");
    guest.kwokNodes().createNamed(vm2, Map.of());
    String uid2 = vmi(infra2, two.infraNamespace(), vm2, "tenant", two.namespace());
    evacuate(infra2, two.infraNamespace(), vm2);
    Await.until(
        "VMI in infra 2 evacuated by the replica left",
        WAIT,
        () -> deleted(infra2, two.infraNamespace(), vm2, uid2));
    assertEquals(holderOf1.identity(), holder(leaseNs, id, key2));
    assertTrue(unschedulable(vm2));
  }

  static String holder(String ns, String id, String key) throws ApiException {
    try {
      return new CoordinationV1Api(management.client())
          .readNamespacedLease(id + "-shard-" + key, ns)
          .execute()
          .getSpec()
          .getHolderIdentity();
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return null;
      }
      throw e;
    }
  }

  static String metrics(Manager m) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + m.metricsAddress().getPort() + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  // ---------------------------------------------------------------------------------------------

  /** A tenant in the management cluster, and the infra namespace its VMIs run in. */
  record Tenant(String namespace, String infraNamespace) {}

  /**
   * A management namespace with Cluster {@code tenant}, its guest kubeconfig Secret and its
   * KubevirtCluster (owned by the Cluster), naming the infra Secret (with {@code infra}'s admin
   * kubeconfig and a namespace key) when {@code external}; the infra namespace in {@code infra}.
   */
  Tenant tenant(String prefix, LocalCluster infra, boolean external) throws Exception {
    String ns = unique(prefix);
    String infraNs = unique(prefix + "-vms");
    namespaces.add(ns);
    namespace(management, ns);
    namespace(infra, infraNs);
    management
        .kubectl()
        .apply(
            """
            apiVersion: cluster.x-k8s.io/v1beta1
            kind: Cluster
            metadata: {name: tenant, namespace: %s}
            """
                .formatted(ns));
    String clusterUid =
        management
            .kubectl()
            .runOrFail(
                null,
                "-n",
                ns,
                "get",
                "clusters.cluster.x-k8s.io",
                "tenant",
                "-o",
                "jsonpath={.metadata.uid}")
            .trim();
    management
        .kubectl()
        .apply(
            """
            apiVersion: v1
            kind: Secret
            metadata:
              name: tenant-kubeconfig
              namespace: %s
              labels: {cluster.x-k8s.io/cluster-name: tenant}
            data:
              value: %s
            """
                .formatted(ns, base64(guest.adminKubeconfigYaml())));
    if (external) {
      infraSecret(ns, infra.adminKubeconfigYaml(), infraNs);
    }
    management
        .kubectl()
        .apply(
            """
            apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
            kind: KubevirtCluster
            metadata:
              name: tenant
              namespace: %s
              ownerReferences:
              - {apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, name: tenant, uid: %s}
            spec: %s
            """
                .formatted(
                    ns, clusterUid, external ? "{infraClusterSecretRef: {name: infra}}" : "{}"));
    return new Tenant(ns, infraNs);
  }

  static void infraSecret(String ns, String kubeconfig, String infraNamespace) {
    management
        .kubectl()
        .apply(
            """
            apiVersion: v1
            kind: Secret
            metadata: {name: infra, namespace: %s}
            data:
              kubeconfig: %s
              namespace: %s
            """
                .formatted(ns, base64(kubeconfig), base64(infraNamespace)));
  }

  void start(String... more) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--infra-clusters",
                "external",
                "--kubeconfig",
                management.kubeconfig().toString(),
                "--health-probe-bind-address",
                "0",
                "--default-eviction-strategy",
                "External"));
    namespaces.forEach(ns -> args.addAll(List.of("--namespace", ns)));
    if (!List.of(more).contains("--metrics-bind-address")) {
      args.addAll(List.of("--metrics-bind-address", "0"));
    }
    args.addAll(List.of(more));
    manager = Main.start(args.toArray(String[]::new));
    Await.until("controller ready", WAIT, manager::ready);
  }

  void captureLogs() {
    logs = new ListAppender<>();
    logs.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
  }

  /** The kubeconfig's secret values: its embedded key, certificate and CA data. */
  static List<String> secretParts(String kubeconfig) {
    List<String> parts = new ArrayList<>();
    for (String line : kubeconfig.split("\n")) {
      String l = line.trim();
      if (l.startsWith("client-key-data:") || l.startsWith("client-certificate-data:")) {
        String value = l.substring(l.indexOf(':') + 1).trim();
        parts.add(value.substring(0, Math.min(40, value.length())));
      }
    }
    assertFalse(parts.isEmpty(), "the admin kubeconfig embeds its credentials");
    return parts;
  }

  static String base64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  static String unique(String prefix) {
    return prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
  }

  static void namespace(LocalCluster c, String name) {
    c.kubectl().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n".formatted(name));
  }

  /** A CAPK-labelled External VMI naming Cluster {@code cluster} in {@code clusterNamespace}. */
  static String vmi(
      LocalCluster infra, String ns, String name, String cluster, String clusterNamespace)
      throws ApiException {
    infra
        .kubectl()
        .apply(
            """
            apiVersion: kubevirt.io/v1
            kind: VirtualMachineInstance
            metadata:
              name: %1$s
              namespace: %2$s
              labels:
                kubevirt.io/vm: %1$s
                cluster.x-k8s.io/cluster-name: %3$s
                capk.cluster.x-k8s.io/kubevirt-machine-name: %1$s
                capk.cluster.x-k8s.io/kubevirt-machine-namespace: %4$s
            spec:
              evictionStrategy: External
              domain:
                devices: {disks: [{name: root, disk: {bus: virtio}}]}
                resources: {requests: {memory: 1Gi}}
            """
                .formatted(name, ns, cluster, clusterNamespace));
    return uid(get(infra, ns, name).orElseThrow());
  }

  static void evacuate(LocalCluster infra, String ns, String name) throws ApiException {
    patchStatus(
        infra,
        ns,
        name,
        "{\"status\":{\"phase\":\"Running\",\"nodeName\":\"infra-node-1\","
            + "\"evacuationNodeName\":\"infra-node-1\"}}");
  }

  static void patchStatus(LocalCluster infra, String ns, String name, String patch)
      throws ApiException {
    CustomObjectsApi custom = new CustomObjectsApi(infra.client());
    PatchUtils.patch(
        Object.class,
        () ->
            custom
                .patchNamespacedCustomObjectStatus(
                    "kubevirt.io", "v1", ns, "virtualmachineinstances", name, new V1Patch(patch))
                .buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
        infra.client());
  }

  @SuppressWarnings("unchecked")
  static Optional<Map<String, Object>> get(LocalCluster infra, String ns, String name)
      throws ApiException {
    try {
      return Optional.of(
          (Map<String, Object>)
              new CustomObjectsApi(infra.client())
                  .getNamespacedCustomObject(
                      "kubevirt.io", "v1", ns, "virtualmachineinstances", name)
                  .execute());
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @SuppressWarnings("unchecked")
  static String uid(Map<String, Object> vmi) {
    return (String) ((Map<String, Object>) vmi.get("metadata")).get("uid");
  }

  @SuppressWarnings("unchecked")
  static boolean deleting(Map<String, Object> vmi) {
    return ((Map<String, Object>) vmi.get("metadata")).get("deletionTimestamp") != null;
  }

  @SuppressWarnings("unchecked")
  static Optional<String> annotation(Map<String, Object> vmi, String key) {
    Map<String, Object> meta = (Map<String, Object>) vmi.get("metadata");
    Map<String, String> annotations = (Map<String, String>) meta.get("annotations");
    return Optional.ofNullable(annotations == null ? null : annotations.get(key));
  }

  static boolean deleted(LocalCluster infra, String ns, String name, String uid)
      throws ApiException {
    Optional<Map<String, Object>> v = get(infra, ns, name);
    return v.isEmpty() || !uid(v.get()).equals(uid) || deleting(v.get());
  }

  static boolean unschedulable(String node) throws ApiException {
    var n = new CoreV1Api(guest.client()).readNode(node).execute();
    return n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
  }

  static List<CoreV1Event> events(LocalCluster c, String ns, String name) throws ApiException {
    return new CoreV1Api(c.client())
        .listNamespacedEvent(ns)
        .fieldSelector("involvedObject.name=" + name)
        .execute()
        .getItems();
  }

  static Optional<CoreV1Event> event(LocalCluster c, String ns, String name, String reason)
      throws ApiException {
    return events(c, ns, name).stream().filter(e -> reason.equals(e.getReason())).findFirst();
  }

  static CoreV1Event awaitEvent(LocalCluster c, String ns, String name, String reason) {
    Await.until(
        "event " + reason + " on " + ns + "/" + name,
        WAIT,
        () -> event(c, ns, name, reason).isPresent());
    try {
      return event(c, ns, name, reason).orElseThrow();
    } catch (ApiException e) {
      throw new AssertionError(e);
    }
  }
}
