package dev.capk.vmieviction.e2e.integration.maintenance;

import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitGone;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitPhase;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitRunning;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.awaitSettled;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.create;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.delete;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.finalizers;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.get;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.intField;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.namespace;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.nodeState;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.pendingPods;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.phase;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.pod;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.status;
import static dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.maintenance.NodeMaintenanceApi;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.integration.maintenance.MaintenanceFixture.NodeState;
import dev.capk.vmieviction.runtime.ControllerRuntime;
import io.kubernetes.client.openapi.models.CoreV1Event;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * NodeMaintenance against a real control plane (kube-apiserver, kube-controller-manager computing
 * PDB status and node taints, kwok running the pods): the controller runs in this JVM as a
 * ServiceAccount bound only to the RBAC of the component config/components/node-maintenance.
 */
class NodeMaintenanceIT {

  @RegisterExtension
  static final LocalClusterExtension ext = LocalClusterExtension.shared("maintenance");

  static LocalCluster cluster;
  static String kubeconfig;
  static ControllerRuntime controller;

  @BeforeAll
  static void start() throws Exception {
    cluster = ext.cluster();
    MaintenanceFixture.installCrd(cluster);
    kubeconfig = MaintenanceFixture.controllerKubeconfig(cluster);
    controller = MaintenanceFixture.startController(kubeconfig);
  }

  @AfterAll
  static void stop() {
    if (controller != null) {
      controller.close();
    }
  }

  /** A Ready kwok node with settled taints, labelled so test DaemonSets can target it. */
  static String node(String prefix) {
    String n = unique(prefix);
    cluster.kwokNodes().createNamed(n, Map.of("nm-it/ds", n));
    awaitSettled(cluster, n);
    return n;
  }

  // -----------------------------------------------------------------------------------------------

  /**
   * A node patch that an admission policy denies (a ValidatingAdmissionPolicy, no webhook server):
   * named in a Warning and in the status' last error, asked again with backoff, never taken for a
   * conflict; the node is left as it was and nothing is drained.
   */
  @Test
  void aNodePatchDeniedByAnAdmissionPolicyIsNamedInAWarningAndNothingIsDrained() throws Exception {
    cluster
        .kubectl()
        .apply(
            """
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicy
            metadata: {name: nm-no-cordon}
            spec:
              failurePolicy: Fail
              matchConstraints:
                resourceRules:
                - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [nodes]}
              validations:
              - expression: >-
                  (has(object.spec.unschedulable) && object.spec.unschedulable) ==
                  (has(oldObject.spec.unschedulable) && oldObject.spec.unschedulable)
                message: this node may not be cordoned
            ---
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicyBinding
            metadata: {name: nm-no-cordon}
            spec:
              policyName: nm-no-cordon
              validationActions: [Deny]
              matchResources:
                objectSelector: {matchLabels: {nm-no-cordon: "true"}}
            """);
    String node = unique("nm-denied");
    cluster.kwokNodes().createNamed(node, Map.of("nm-no-cordon", "true"));
    awaitSettled(cluster, node);
    // A policy takes effect once the API server's admission has loaded it: a server-side dry run
    // of a cordon says when.
    Await.until(
        "policy nm-no-cordon in effect",
        WAIT,
        () ->
            !cluster
                .kubectl()
                .run(
                    null,
                    Duration.ofSeconds(30),
                    "patch",
                    "node",
                    node,
                    "--dry-run=server",
                    "-p",
                    "{\"spec\":{\"unschedulable\":true}}")
                .ok());
    String ns = unique("nm-denied");
    namespace(cluster, ns);
    pod(cluster, ns, "web-0", node, "web");
    awaitRunning(cluster, ns, 1);

    String nm = unique("nm-denied");
    create(cluster, nm, node, "denied by policy");
    CoreV1Event refused = awaitEvent(cluster, "NodeMaintenance", nm, "RequestRefused");
    assertEquals("Warning", refused.getType());
    assertTrue(
        refused.getMessage().contains("tainting and cordoning node " + node + " refused: HTTP 422"),
        refused.getMessage());
    assertTrue(
        refused.getMessage().contains("this node may not be cordoned"), refused.getMessage());
    Await.until(
        "the refusal as the last error",
        WAIT,
        () ->
            String.valueOf(status(cluster, nm).get("lastError"))
                .contains("this node may not be cordoned"));
    assertFalse(nodeState(cluster, node).unschedulable(), "left as it was");
    assertEquals(1, podsOn(cluster, node).size(), "nothing drained");
    assertFalse("Succeeded".equals(phase(cluster, nm)));

    delete(cluster, nm);
    awaitGone(cluster, nm);
  }

  @Test
  void maintenanceTaintsCordonsAndDrainsTheNodeToSucceededAndDeletionRestoresItExactly()
      throws Exception {
    String node = node("nm-drain");
    String ns = unique("nm-drain");
    namespace(cluster, ns);
    for (int i = 0; i < 3; i++) {
      pod(cluster, ns, "web-" + i, node, "web");
    }
    // A DaemonSet pod on the node: left in place, as the Node Maintenance Operator does.
    cluster
        .kubectl()
        .apply(
            """
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: agent, namespace: %s}
        spec:
          selector: {matchLabels: {app: agent}}
          template:
            metadata: {labels: {app: agent}}
            spec:
              nodeSelector: {nm-it/ds: %s}
              terminationGracePeriodSeconds: 1
              containers: [{name: agent, image: agent:fake}]
        """
                .formatted(ns, node));
    awaitRunning(cluster, ns, 4);
    NodeState before = nodeState(cluster, node);
    assertFalse(before.unschedulable());

    String nm = unique("nm-drain");
    create(cluster, nm, node, "kernel upgrade");
    awaitPhase(cluster, nm, "Succeeded");

    Map<String, Object> st = status(cluster, nm);
    assertEquals(100, intField(st, "drainProgress"));
    assertEquals(3, intField(st, "evictionPods"), st.toString());
    assertEquals(4, intField(st, "totalpods"), st.toString());
    assertEquals(List.of(), pendingPods(st));
    assertNull(st.get("lastError"));
    assertTrue(st.get("lastUpdate") instanceof String, st.toString());
    assertEquals(List.of(NodeMaintenanceApi.FINALIZER), finalizers(get(cluster, nm).orElseThrow()));
    NodeState during = nodeState(cluster, node);
    assertTrue(during.unschedulable());
    assertTrue(
        during
            .taints()
            .containsAll(
                List.of(
                    "node.kubernetes.io/unschedulable:NoSchedule", "medik8s.io/drain:NoSchedule")),
        during.taints().toString());
    assertTrue(during.mark().isPresent());
    List<String> left = podsOn(cluster, node);
    assertEquals(1, left.size(), "only the DaemonSet pod stays: " + left);
    assertTrue(left.get(0).startsWith(ns + "/agent-"), left.toString());

    awaitEvent(cluster, "NodeMaintenance", nm, "BeginMaintenance");
    awaitEvent(cluster, "NodeMaintenance", nm, "SucceedMaintenance");
    awaitEvent(cluster, "Node", node, "CordonNode");

    // kubectl get nm: the printer columns.
    String table = cluster.kubectl().runOrFail(null, "get", "nm", nm);
    List<String> header = List.of(table.lines().findFirst().orElseThrow().trim().split("\\s+"));
    assertEquals(List.of("NAME", "NODE", "PHASE", "PROGRESS", "REASON", "AGE"), header, table);
    String row = table.lines().skip(1).findFirst().orElseThrow();
    assertTrue(
        row.matches(
            "^" + nm + "\\s+" + node + "\\s+Succeeded\\s+100\\s+kernel upgrade\\s+\\S+\\s*$"),
        table);
    String wide = cluster.kubectl().runOrFail(null, "get", "nm", nm, "-o", "wide");
    assertTrue(wide.lines().findFirst().orElseThrow().contains("LAST ERROR"), wide);

    delete(cluster, nm);
    awaitGone(cluster, nm);
    NodeState after = awaitSettled(cluster, node);
    assertEquals(
        before, after, "taints, schedulability and annotations exactly as before maintenance");
    awaitEvent(cluster, "Node", node, "UncordonNode");
  }

  @Test
  void aNodeCordonedBeforeMaintenanceStaysCordonedWithItsOwnTaintsAfterIt() throws Exception {
    String node = node("nm-precordoned");
    cluster.kubectl().runOrFail(null, "taint", "node", node, "example.com/keep=yes:NoSchedule");
    cluster.kubectl().runOrFail(null, "cordon", node);
    NodeState before = awaitSettled(cluster, node);
    assertTrue(before.unschedulable());

    String nm = unique("nm-precordoned");
    create(cluster, nm, node, "cordoned before");
    awaitPhase(cluster, nm, "Succeeded");
    assertTrue(nodeState(cluster, node).taints().contains("medik8s.io/drain:NoSchedule"));

    delete(cluster, nm);
    awaitGone(cluster, nm);
    NodeState after = awaitSettled(cluster, node);
    assertEquals(before, after);
    assertTrue(after.unschedulable(), "still cordoned: it was before maintenance");
    CoreV1Event e = awaitEvent(cluster, "Node", node, "UncordonNode");
    assertTrue(
        e.getMessage().contains("left cordoned as it was before maintenance"), e.getMessage());
  }

  @Test
  void aSecondMaintenanceOfTheSameNodeIsRefusedAndChangesNothing() throws Exception {
    String node = node("nm-dup");
    String first = unique("nm-dup-first");
    create(cluster, first, node, "first");
    awaitPhase(cluster, first, "Succeeded");
    NodeState owned = nodeState(cluster, node);

    String second = unique("nm-dup-second");
    create(cluster, second, node, "second");
    awaitPhase(cluster, second, "Failed");
    String error = (String) status(cluster, second).get("lastError");
    assertTrue(
        error.startsWith(
            "invalid nodeName, a NodeMaintenance for node " + node + " already exists: " + first),
        error);
    assertEquals(List.of(), finalizers(get(cluster, second).orElseThrow()));
    CoreV1Event refused = awaitEvent(cluster, "NodeMaintenance", second, "DuplicateMaintenance");
    assertEquals("Warning", refused.getType());
    assertEquals(owned, nodeState(cluster, node), "the refused maintenance changed nothing");

    // Deleting the refused one changes nothing either; the first still owns the node.
    delete(cluster, second);
    awaitGone(cluster, second);
    assertEquals("Succeeded", phase(cluster, first));
    assertEquals(owned, nodeState(cluster, node));

    delete(cluster, first);
    awaitGone(cluster, first);
    NodeState after = awaitSettled(cluster, node);
    assertFalse(after.unschedulable());
    assertFalse(after.taints().contains("medik8s.io/drain:NoSchedule"), after.toString());
  }

  @Test
  void aMaintenanceOfAnUnknownNodeFailsWithAClearErrorAndCanBeDeleted() throws Exception {
    String nm = unique("nm-unknown");
    create(cluster, nm, "no-such-node", "typo");
    awaitPhase(cluster, nm, "Failed");
    String error = (String) status(cluster, nm).get("lastError");
    assertTrue(error.startsWith("invalid nodeName, no node with name no-such-node found"), error);
    assertEquals(List.of(), finalizers(get(cluster, nm).orElseThrow()));
    assertEquals("Warning", awaitEvent(cluster, "NodeMaintenance", nm, "NodeNotFound").getType());
    delete(cluster, nm);
    awaitGone(cluster, nm);
  }

  @Test
  void aBlockingBudgetKeepsTheMaintenanceRunningWithPendingPodsThenItSucceedsWhenTheBudgetAllows()
      throws Exception {
    String node = node("nm-pdb");
    String ns = unique("nm-pdb");
    String nm = unique("nm-pdb");
    blockedMaintenance(node, ns, nm);

    relaxBudget(ns);
    awaitPhase(cluster, nm, "Succeeded");
    Map<String, Object> st = status(cluster, nm);
    assertEquals(100, intField(st, "drainProgress"));
    assertEquals(4, intField(st, "evictionPods"), "counted once, at the start");
    assertNull(st.get("lastError"));
    assertEquals(List.of(), podsOn(cluster, node));
    delete(cluster, nm);
    awaitGone(cluster, nm);
  }

  @Test
  void aControllerRestartedMidDrainResumesCompletesAndStillRestoresTheNode() throws Exception {
    String node = node("nm-restart");
    NodeState before = nodeState(cluster, node);
    String ns = unique("nm-restart");
    String nm = unique("nm-restart");
    blockedMaintenance(node, ns, nm);
    String firstUpdate = (String) status(cluster, nm).get("lastUpdate");

    controller.close();
    relaxBudget(ns);
    // Stopped: nothing evicts the guarded pod.
    Thread.sleep(2000);
    assertEquals("Running", phase(cluster, nm));
    assertEquals(List.of(ns + "/db-0"), podsOn(cluster, node));

    controller = MaintenanceFixture.startController(kubeconfig);
    awaitPhase(cluster, nm, "Succeeded");
    Map<String, Object> st = status(cluster, nm);
    assertEquals(4, intField(st, "evictionPods"), "the counts survive the restart");
    assertEquals(4, intField(st, "totalpods"));
    assertFalse(firstUpdate.isEmpty());

    delete(cluster, nm);
    awaitGone(cluster, nm);
    assertEquals(
        before,
        awaitSettled(cluster, node),
        "restored from what the node recorded, not from memory");
  }

  @Test
  void aNodeDeletedDuringMaintenanceFailsItAndTheMaintenanceCanStillBeDeleted() throws Exception {
    String node = node("nm-vanish");
    String nm = unique("nm-vanish");
    create(cluster, nm, node, "decommission");
    awaitPhase(cluster, nm, "Succeeded");

    cluster.kubectl().runOrFail(null, "delete", "node", node);
    awaitPhase(cluster, nm, "Failed");
    String error = (String) status(cluster, nm).get("lastError");
    assertTrue(
        error.startsWith("node " + node + " not found: it was deleted during maintenance"), error);
    awaitEvent(cluster, "NodeMaintenance", nm, "FailedMaintenance");

    delete(cluster, nm);
    awaitGone(cluster, nm);
  }

  @Test
  void theNodeNameOfAMaintenanceCannotBeChanged() throws Exception {
    String node = node("nm-immutable");
    String nm = unique("nm-immutable");
    create(cluster, nm, node, "immutable");
    awaitPhase(cluster, nm, "Succeeded");
    Kubectl.Result r =
        cluster
            .kubectl()
            .run(
                null,
                Duration.ofSeconds(30),
                "patch",
                "nm",
                nm,
                "--type=merge",
                "-p",
                "{\"spec\":{\"nodeName\":\"other\"}}");
    assertFalse(r.ok());
    assertTrue(r.stderr().contains("updating spec.nodeName isn't allowed"), r.stderr());
    delete(cluster, nm);
    awaitGone(cluster, nm);
  }

  // -----------------------------------------------------------------------------------------------

  /**
   * Three free pods and one guarded by a budget that allows no disruption; a maintenance of the
   * node runs until it reports exactly the guarded pod pending, with the budget in lastError.
   */
  static void blockedMaintenance(String node, String ns, String nm) throws Exception {
    namespace(cluster, ns);
    for (int i = 0; i < 3; i++) {
      pod(cluster, ns, "free-" + i, node, "free");
    }
    pod(cluster, ns, "db-0", node, "db");
    MaintenanceFixture.budgetNeverAllowingDb(cluster, ns, 4);

    create(cluster, nm, node, "blocked by a budget");
    List<Map<String, Object>> seen = new ArrayList<>();
    Await.until(
        "NodeMaintenance " + nm + " Running with db-0 pending",
        WAIT,
        () -> {
          Map<String, Object> st = status(cluster, nm);
          seen.clear();
          seen.add(st);
          return "Running".equals(st.get("phase"))
              && List.of("db-0").equals(pendingPods(st))
              && st.get("lastError") instanceof String e
              && e.contains("PodDisruptionBudget " + ns + "/db");
        });
    Map<String, Object> st = seen.get(0);
    assertEquals(4, intField(st, "evictionPods"), st.toString());
    assertEquals(75, intField(st, "drainProgress"), st.toString());
    assertEquals(List.of(ns + "/db-0"), podsOn(cluster, node));
    String wide = cluster.kubectl().runOrFail(null, "get", "nm", nm, "-o", "wide");
    assertTrue(wide.lines().findFirst().orElseThrow().contains("PODS TO EVICT"), wide);
    assertTrue(
        wide.contains("db-0") && wide.contains("Running") && wide.contains(ns + "/db"), wide);
    // It stays so: a blocked drain is retried, never declared done.
    Thread.sleep(1500);
    assertEquals("Running", phase(cluster, nm));
    awaitEvent(cluster, "NodeMaintenance", nm, "DrainBlocked");
  }

  static void relaxBudget(String ns) {
    cluster
        .kubectl()
        .runOrFail(
            null,
            "-n",
            ns,
            "patch",
            "pdb",
            "db",
            "--type=merge",
            "-p",
            "{\"spec\":{\"minAvailable\":0}}");
  }
}
