package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.event;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.nodeAnnotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.bench.AuditLog;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Answers taken for what they are, against a real guest API server: a node in a shape the client's
 * model hides (no annotations at all) is cordoned and drained like any other; a write that a
 * ValidatingAdmissionPolicy refuses (GA since Kubernetes 1.30, no webhook server) is named in a
 * Warning, asked again only once per backoff step (counted in the guest API server's audit log),
 * and the VMI is deleted at its deadline all the same.
 */
class RefusalsAndShapesIT {

  static final Path AUDIT = EvictionFixture.tempDir("vmi-eviction-refusals-audit");

  static final String GUEST = "guest-refusals";

  /** Written once: the shape below is applied again whenever the shared cluster is asked for. */
  static final List<String> AUDIT_FLAGS =
      AuditLog.apiServerFlags(
          AUDIT,
          GUEST,
          """
          - level: Metadata
            users: ["%s"]
            resources: [{group: "", resources: ["nodes", "pods/eviction"]}]
          """
              .formatted(AuditLog.USER));

  @RegisterExtension
  static final LocalClusterExtension infraExt = LocalClusterExtension.shared("infra");

  /**
   * A guest cluster of this class's own, with kwok only: no controller manager, whose TTL
   * controller would annotate every node at once (the shape under test is a node without any).
   */
  @RegisterExtension
  static final LocalClusterExtension guestExt =
      LocalClusterExtension.shared(
          GUEST,
          b -> {
            LocalCluster.Builder shaped = b.withKwok();
            for (String flag : AUDIT_FLAGS) {
              shaped = shaped.apiServerFlag(flag);
            }
            return shaped;
          });

  static LocalCluster infra;
  static LocalCluster guest;
  static Path dir;
  Manager manager;

  /**
   * The guest's eviction requests, which one test counts in the audit log: the tests that make them
   * do not overlap. The two tests that wait for a 25 s deadline run at once, each with a
   * controller, a namespace and a node of its own; every other count is of one node.
   */
  static final String EVICTIONS = "guest pod evictions";

  @BeforeAll
  static void clusters() {
    infra = infraExt.cluster();
    guest = guestExt.cluster();
    Crds.installTestCrds(infra);
    dir = EvictionFixture.tempDir("vmi-eviction-refusals-it");
    guest
        .kubectl()
        .apply(
            """
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicy
            metadata: {name: no-cordon}
            spec:
              failurePolicy: Fail
              matchConstraints:
                resourceRules:
                - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [nodes]}
              validations:
              - expression: >-
                  (has(object.spec.unschedulable) && object.spec.unschedulable) ==
                  (has(oldObject.spec.unschedulable) && oldObject.spec.unschedulable)
                message: the tenant does not allow cordons of its nodes
            ---
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicyBinding
            metadata: {name: no-cordon}
            spec:
              policyName: no-cordon
              validationActions: [Deny]
              matchResources:
                objectSelector: {matchLabels: {no-cordon: "true"}}
            ---
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicy
            metadata: {name: no-evictions}
            spec:
              failurePolicy: Fail
              matchConstraints:
                resourceRules:
                - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods/eviction]}
              validations:
              - expression: "false"
                message: the tenant does not allow evictions in this namespace
            ---
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicyBinding
            metadata: {name: no-evictions}
            spec:
              policyName: no-evictions
              validationActions: [Deny]
              matchResources:
                namespaceSelector: {matchLabels: {no-evictions: "true"}}
            """);
    // A policy takes effect once the API server's admission has loaded it (both are loaded by the
    // same watch): a server-side dry run of a cordon of a node the first one guards says when.
    String probe = unique("policy-probe");
    guest.kwokNodes().createNamed(probe, Map.of("no-cordon", "true"));
    Await.until(
        "policy no-cordon in effect",
        WAIT,
        () ->
            !guest
                .kubectl()
                .run(
                    null,
                    java.time.Duration.ofSeconds(30),
                    "patch",
                    "node",
                    probe,
                    "--dry-run=server",
                    "-p",
                    "{\"spec\":{\"unschedulable\":true}}")
                .ok());
  }

  @AfterEach
  void stopController() {
    if (manager != null) {
      manager.close();
    }
  }

  @Test
  @ResourceLock(EVICTIONS)
  void aNodeWithoutAnyAnnotationsIsCordonedDrainedAndItsVmiDeletedWithDrainSucceeded()
      throws Exception {
    String ns = tenant("no-annotations");
    String vm = unique("vm-bare");
    guest.kwokNodes().createNamed(vm, Map.of());
    String workload = unique("bare-pods");
    pods(workload, vm, 3, false);
    // The node's annotations go, kwok's own too: the field is absent on the server, as the API
    // allows. Its pods, with no grace period, leave on eviction without a kubelet's word.
    guest
        .kubectl()
        .runOrFail(
            null,
            "patch",
            "node",
            vm,
            "--type=json",
            "-p",
            "[{\"op\":\"remove\",\"path\":\"/metadata/annotations\"}]");
    assertFalse(rawNode(vm).getAsJsonObject("metadata").has("annotations"), "no annotations");
    String uid = vmi(infra, ns, vm, "tenant", "External");
    startController(ns, "60s");

    evacuate(infra, ns, vm, "infra-node-bare");
    awaitDeleted(infra, ns, vm, uid);

    // The outcome event is written right after the delete.
    awaitEvent(infra, ns, vm, "DrainSucceeded");
    assertFalse(event(infra, ns, vm, "DrainDeadlinePassed").isPresent(), "before its deadline");
    assertTrue(unschedulable(node(guest, vm)), "cordoned");
    assertEquals(
        Optional.of(uid), nodeAnnotation(node(guest, vm), EvictionAnnotations.CORDONED_BY));
    assertEquals(0, podsOf(workload).size(), "every pod evicted");
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aCordonDeniedByAnAdmissionPolicyIsNamedBackedOffAndTheVmiDeletedAtItsDeadline()
      throws Exception {
    String ns = tenant("denied-cordon");
    String vm = unique("vm-nocordon");
    guest.kwokNodes().createNamed(vm, Map.of("no-cordon", "true"));
    String uid = vmi(infra, ns, vm, "tenant", "External");
    startController(ns, "25s");
    Instant from = Instant.now();

    evacuate(infra, ns, vm, "infra-node-nocordon");
    CoreV1Event refused = awaitEvent(infra, ns, vm, "GuestAPIRefused");
    assertTrue(
        refused.getMessage().contains("cordoning node " + vm + " refused: HTTP 422"),
        refused.getMessage());
    assertTrue(
        refused.getMessage().contains("the tenant does not allow cordons of its nodes"),
        refused.getMessage());
    awaitDeleted(infra, ns, vm, uid);
    Instant to = Instant.now();

    String deadline = event(infra, ns, vm, "DrainDeadlinePassed").orElseThrow().getMessage();
    assertTrue(
        deadline.contains("cordoning node " + vm + " refused")
            && deadline.contains("the tenant does not allow cordons"),
        "the deadline event names what held the drain: " + deadline);
    assertFalse(unschedulable(node(guest, vm)), "never cordoned");
    var onNode =
        new CoreV1Api(guest.client())
            .listEventForAllNamespaces()
            .fieldSelector("involvedObject.kind=Node,involvedObject.name=" + vm)
            .execute()
            .getItems();
    assertTrue(
        onNode.stream()
            .anyMatch(
                e ->
                    "GuestAPIRefused".equals(e.getReason())
                        && "Warning".equals(e.getType())
                        && e.getMessage().contains("the tenant does not allow cordons")),
        "told on the guest node too: " + onNode);
    // Backoff from 1 s, doubling, within a 25 s deadline: at most 1+2+4+8+16 -> 5 or 6 attempts.
    // A refusal retried as a conflict (every 0.5 s) would have made some 50.
    int patches = nodePatches(vm, from, to);
    assertTrue(patches >= 2 && patches <= 7, "cordon attempts: " + patches);
    // The refusal is no race: the node is not read again after it.
    assertEquals(0, nodeRequests(vm, from, to, "get"), "no re-read of the node");
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(EVICTIONS)
  void evictionsDeniedByAnAdmissionPolicyAreNamedAndTheVmiDeletedAtItsDeadline() throws Exception {
    String ns = tenant("denied-evictions");
    String vm = unique("vm-noevict");
    guest.kwokNodes().createNamed(vm, Map.of());
    String workload = unique("guarded");
    pods(workload, vm, 2, true);
    String uid = vmi(infra, ns, vm, "tenant", "External");
    startController(ns, "25s");
    Instant from = Instant.now();

    evacuate(infra, ns, vm, "infra-node-noevict");
    awaitDeleted(infra, ns, vm, uid);
    Instant to = Instant.now();

    List<CoreV1Event> events = EvictionFixture.events(infra, ns, vm);
    Optional<CoreV1Event> blocked =
        events.stream().filter(e -> "DrainBlocked".equals(e.getReason())).findFirst();
    assertTrue(blocked.isPresent(), "a Warning while the evictions are refused: " + events);
    assertTrue(
        blocked.get().getMessage().contains("the tenant does not allow evictions"),
        blocked.get().getMessage());
    String deadline = event(infra, ns, vm, "DrainDeadlinePassed").orElseThrow().getMessage();
    assertTrue(
        deadline.contains(workload + "/p0 (eviction failed")
            && deadline.contains("ValidatingAdmissionPolicy 'no-evictions'"),
        "the deadline event names the pods and why: " + deadline);
    assertEquals(2, podsOf(workload).size(), "no pod of the guarded namespace was lost");
    // Each pod is asked again once per retry step (the longest wait after a failure), not in a
    // loop: 2 pods, a 25 s deadline.
    int evictions =
        AuditLog.count(AuditLog.logOf(AUDIT, GUEST), from, to)
            .getOrDefault("create pods/eviction", 0);
    assertTrue(evictions >= 2 && evictions <= 8, "eviction attempts: " + evictions);
  }

  /**
   * Every shape in which the API server can hold a node, created from raw JSON so that no client
   * model's defaults fill in an absent field.
   */
  static final List<String> SHAPES =
      List.of(
          "{%s\"metadata\":{\"name\":\"%s\"}}",
          "{%s\"metadata\":{\"name\":\"%s\",\"labels\":{\"a\":\"b\"}},\"spec\":{}}",
          "{%s\"metadata\":{\"name\":\"%s\",\"annotations\":{}},\"spec\":{\"unschedulable\":false}}",
          "{%s\"metadata\":{\"name\":\"%s\",\"annotations\":%s},"
              + "\"spec\":{\"taints\":[{\"key\":\"foreign\",\"effect\":\"NoSchedule\"}]}}",
          "{%s\"metadata\":{\"name\":\"%s\",\"labels\":{}},"
              + "\"spec\":{\"providerID\":\"kubevirt://x\",\"taints\":[{\"key\":\"t\","
              + "\"value\":\"v\",\"effect\":\"NoExecute\"}]}}");

  /** Twenty annotations of others, for the shape that has many. */
  static String manyAnnotations() {
    JsonObject a = new JsonObject();
    for (int i = 0; i < 20; i++) {
      a.addProperty("example.com/note-" + i, "value " + i);
    }
    return a.toString();
  }

  /** A node of shape {@code i}, created from its JSON; its JSON as the server holds it. */
  private static JsonObject shapedNode(int i, String name) throws Exception {
    Path file = dir.resolve(name + ".json");
    java.nio.file.Files.writeString(
        file,
        SHAPES
            .get(i)
            .formatted("\"apiVersion\":\"v1\",\"kind\":\"Node\",", name, manyAnnotations()));
    guest.kubectl().runOrFail(null, "create", "-f", file.toString());
    return rawNode(name);
  }

  /**
   * The controller's cordon and uncordon (JSON Patches guarded by tests, built from the node as the
   * client decodes it): each applies to every shape, changes only its own fields, and the uncordon
   * leaves the node as it was.
   */
  @Test
  void theControllersCordonAndUncordonApplyToEveryShapeAndTouchNothingElse() throws Exception {
    for (int i = 0; i < SHAPES.size(); i++) {
      String name = unique("shape-ctl-" + i);
      JsonObject before = shapedNode(i, name);
      var read = new CoreV1Api(guest.client()).readNode(name).execute();
      jsonPatch(
          name,
          dev.capk.vmieviction.drain.Cordoner.cordonPatch(
              read, EvictionAnnotations.CORDONED_BY, "uid-" + i));
      var cordoned = node(guest, name);
      assertTrue(unschedulable(cordoned), "shape " + i + " cordoned");
      assertEquals(
          Optional.of("uid-" + i), nodeAnnotation(cordoned, EvictionAnnotations.CORDONED_BY));
      jsonPatch(
          name,
          dev.capk.vmieviction.drain.Cordoner.uncordonPatch(
              cordoned, EvictionAnnotations.CORDONED_BY));
      assertSameExceptVersion(before, rawNode(name), "shape " + i + " after uncordon");
    }
  }

  /**
   * The NodeMaintenance controller's patches (JSON Patches guarded by tests, built from the node as
   * the controller decodes it): entering taints, cordons and marks every shape, leaving restores it
   * exactly.
   */
  @Test
  void theMaintenancePatchesApplyToEveryShapeAndLeavingRestoresItExactly() throws Exception {
    for (int i = 0; i < SHAPES.size(); i++) {
      String name = unique("shape-nm-" + i);
      JsonObject before = shapedNode(i, name);
      var entering =
          dev.capk.vmieviction.maintenance.NodePatches.enter(
                  decoded(before),
                  List.of(
                      dev.capk.vmieviction.maintenance.Taint.UNSCHEDULABLE,
                      dev.capk.vmieviction.maintenance.Taint.MEDIK8S_DRAIN),
                  "nm-" + i,
                  "nm-uid-" + i)
              .orElseThrow();
      jsonPatch(name, entering.patch());
      JsonObject during = rawNode(name);
      assertTrue(during.getAsJsonObject("spec").get("unschedulable").getAsBoolean(), name);
      assertTrue(
          during.getAsJsonObject("spec").get("taints").toString().contains("medik8s.io/drain"),
          during.toString());
      var leaving =
          dev.capk.vmieviction.maintenance.NodePatches.leave(decoded(during), "nm-uid-" + i)
              .orElseThrow();
      jsonPatch(name, leaving.patch());
      assertSameExceptVersion(before, rawNode(name), "shape " + i + " after maintenance");
    }
  }

  private static io.kubernetes.client.openapi.models.V1Node decoded(JsonObject node) {
    return dev.capk.vmieviction.kube.LenientJson.GSON.fromJson(
        node, io.kubernetes.client.openapi.models.V1Node.class);
  }

  /** The CLI's cordon and uncordon, as `kubectl fastdrain cordon|uncordon` run them. */
  @Test
  void theCliCordonAndUncordonApplyToEveryShape() throws Exception {
    var cordoner =
        new dev.capk.vmieviction.drain.Cordoner(
            new dev.capk.vmieviction.kube.RawApi(guest.client()));
    for (int i = 0; i < SHAPES.size(); i++) {
      String name = unique("shape-cli-" + i);
      JsonObject before = shapedNode(i, name);
      assertTrue(cordoner.setUnschedulable(name, true, dev.capk.vmieviction.drain.DryRun.NONE));
      assertTrue(unschedulable(node(guest, name)), "shape " + i + " cordoned");
      assertTrue(cordoner.setUnschedulable(name, false, dev.capk.vmieviction.drain.DryRun.NONE));
      assertSameExceptVersion(before, rawNode(name), "shape " + i + " after uncordon");
    }
  }

  /**
   * A cordon the tenant's policy denies, from the CLI: kubectl's exit code and the server's reason,
   * one request (no retry loop), as kubectl itself does.
   */
  @Test
  void theCliNamesADeniedCordonAndExitsAsKubectlDoesWithoutRetrying() throws Exception {
    String name = unique("cli-denied");
    guest.kwokNodes().createNamed(name, Map.of("no-cordon", "true"));
    var kubectl = guest.kubectl().run(null, java.time.Duration.ofSeconds(30), "cordon", name);

    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    Path kubeconfig = dir.resolve("cli-denied.kubeconfig");
    java.nio.file.Files.writeString(
        kubeconfig, guest.kubeconfigFor(AuditLog.USER, "system:masters"));
    Instant from = Instant.now();
    int code =
        dev.capk.vmieviction.drain.cli.NodeCli.run(
            new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
            new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8),
            false,
            "cordon",
            name,
            "--kubeconfig",
            kubeconfig.toString());
    Instant to = Instant.now().plusSeconds(1);
    String stderr = err.toString(java.nio.charset.StandardCharsets.UTF_8);

    assertEquals(kubectl.exitCode(), code, "kubectl's exit code; stderr: " + stderr);
    assertTrue(stderr.startsWith("error: unable to cordon node \"" + name + "\": "), stderr);
    assertTrue(stderr.contains("the tenant does not allow cordons of its nodes"), stderr);
    // kubectl prints the refusal and exits 0 all the same: so does the drop-in.
    assertEquals(
        kubectl.stderr().strip().replace(name, "NODE"),
        stderr.strip().replace(name, "NODE"),
        "kubectl's line");
    assertEquals(1, nodePatches(name, from, to), "one attempt, no retry loop");
    assertFalse(unschedulable(node(guest, name)));
  }

  /** Same metadata (but the versions the write moved) and spec: nothing else was touched. */
  private static void assertSameExceptVersion(JsonObject before, JsonObject after, String what) {
    for (JsonObject o : List.of(before, after)) {
      o.getAsJsonObject("metadata").remove("resourceVersion");
      o.getAsJsonObject("metadata").remove("managedFields");
    }
    assertEquals(before.get("metadata"), after.get("metadata"), what);
    assertEquals(before.get("spec"), after.get("spec"), what);
  }

  private static void jsonPatch(String node, String patch) {
    guest.kubectl().runOrFail(null, "patch", "node", node, "--type=json", "-p", patch);
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * {@code count} bare pods bound to {@code node}, with no grace period (they go at once when
   * evicted, with or without a kubelet); in a namespace whose evictions are denied if {@code
   * guarded}.
   */
  private static void pods(String ns, String node, int count, boolean guarded) {
    StringBuilder yaml =
        new StringBuilder(
            """
            apiVersion: v1
            kind: Namespace
            metadata: {name: %s, labels: {no-evictions: "%s"}}
            """
                .formatted(ns, guarded));
    for (int i = 0; i < count; i++) {
      yaml.append(
          """
          ---
          apiVersion: v1
          kind: Pod
          metadata: {name: p%d, namespace: %s}
          spec:
            nodeName: %s
            terminationGracePeriodSeconds: 0
            containers: [{name: main, image: app:fake}]
          """
              .formatted(i, ns, node));
    }
    guest.kubectl().apply(yaml.toString());
    Await.until(
        count + " running pods in " + ns,
        WAIT,
        () ->
            podsOf(ns).stream()
                    .filter(p -> p.getStatus() != null)
                    .filter(p -> "Running".equals(p.getStatus().getPhase()))
                    .count()
                == count);
  }

  private static List<io.kubernetes.client.openapi.models.V1Pod> podsOf(String ns)
      throws Exception {
    return new CoreV1Api(guest.client()).listNamespacedPod(ns).execute().getItems();
  }

  private static JsonObject rawNode(String name) {
    return JsonParser.parseString(
            guest.kubectl().runOrFail(null, "get", "node", name, "-o", "json"))
        .getAsJsonObject();
  }

  private String tenant(String prefix) throws Exception {
    String ns = unique(prefix);
    EvictionFixture.tenant(
        infra, ns, "tenant", guest.kubeconfigFor(AuditLog.USER, "system:masters"));
    return ns;
  }

  private void startController(String ns, String drainTimeout) throws Exception {
    manager =
        EvictionFixture.startManager(
            EvictionFixture.controllerKubeconfig(infra, dir),
            null,
            "--drain-timeout",
            drainTimeout,
            "--namespace",
            ns);
  }

  private static int nodePatches(String node, Instant from, Instant to) {
    return nodeRequests(node, from, to, "patch");
  }

  /** The controller's requests of one verb on one node, from the guest's audit log. */
  private static int nodeRequests(String node, Instant from, Instant to, String verb) {
    return (int)
        AuditLog.entries(AuditLog.logOf(AUDIT, GUEST)).stream()
            .filter(e -> verb.equals(e.verb()) && "nodes".equals(e.resource()))
            .filter(e -> node.equals(e.name()))
            .filter(e -> !e.received().isBefore(from) && e.received().isBefore(to))
            .count();
  }
}
