package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.nodeAnnotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.recreatedRunning;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.running;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.bench.AuditLog;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The evacuations of one guest cluster read its nodes from one node watch: no GET of a node per
 * step, one list for all of them, counted by the guest API server's audit log of the controller's
 * identity there ({@link AuditLog#USER}). A change made by someone else while the watch runs (an
 * admin's cordon) is honoured as if the node had been read. A guest identity that may not list
 * nodes still evacuates, reading its node by name.
 */
class GuestNodeWatchIT {

  static final Path AUDIT = EvictionFixture.tempDir("vmi-eviction-node-watch-audit");

  /** Written once: the shape below is applied again whenever the shared cluster is asked for. */
  static final List<String> AUDIT_FLAGS = auditFlags();

  /** A guest cluster of this class's own: its API server writes the audit log. */
  @RegisterExtension
  static final EvictionWorld world =
      EvictionWorld.withGuest(
          "guest-nodewatch",
          b -> {
            // Nodes only (kwok keeps them Ready): the steps' node reads are what is counted.
            LocalCluster.Builder shaped = b.withKwok();
            for (String flag : AUDIT_FLAGS) {
              shaped = shaped.apiServerFlag(flag);
            }
            return shaped;
          });

  @Test
  void eachEvacuationReadsItsGuestNodeFromAWatchOfThatNodeWithoutAListOrAGetPerStep()
      throws Exception {
    String ns = tenant("node-watch");
    List<String> vms = List.of(unique("vm-nw-a"), unique("vm-nw-b"), unique("vm-nw-c"));
    vms.forEach(vm -> world.guest().kwokNodes().createNamed(vm, Map.of()));
    Map<String, String> uids = new TreeMap<>();
    for (String vm : vms) {
      uids.put(vm, vmi(world.infra(), ns, vm, "tenant", "External"));
    }
    Instant from = Instant.now();
    long vmiPatchesBefore = EvictionFixture.vmiPatches(world.infra());
    world.startController(ns);

    for (String vm : vms) {
      evacuate(world.infra(), ns, vm, "infra-node-nw");
    }
    for (String vm : vms) {
      awaitDeleted(world.infra(), ns, vm, uids.get(vm));
      assertTrue(unschedulable(node(world.guest(), vm)), vm + " cordoned");
    }
    // KubeVirt recreates each VMI; once it runs, its node is uncordoned.
    for (String vm : vms) {
      recreatedRunning(world.infra(), ns, vm, "tenant", "infra-node-nw-2");
    }
    for (String vm : vms) {
      awaitEvent(world.infra(), ns, vm, "GuestNodeUncordoned");
      assertTrue(!unschedulable(node(world.guest(), vm)), vm + " uncordoned");
    }

    Map<String, Integer> calls = nodeRequests(from);
    assertEquals(0, calls.getOrDefault("get", 0), "no node read per step: " + calls);
    // Each node's watch gets its node as its first event (a streaming list): no list request.
    assertEquals(0, calls.getOrDefault("list", 0), "no node list: " + calls);
    assertEquals(6, calls.getOrDefault("patch", 0), "a cordon and an uncordon each: " + calls);
    // On the infra side, two VMI patches per evacuation whatever its number of steps: the drain
    // start with the phase, and the admission (no role label) with the phase.
    assertEquals(
        6,
        EvictionFixture.vmiPatches(world.infra()) - vmiPatchesBefore,
        "VMI patches of three evacuations");
    // (The watch itself is audited when it ends, after up to two minutes: not counted here.)
  }

  @Test
  void atStartTheUncordonChecksOfRunningVmisReadOneNodeEachAndListNoNodes() throws Exception {
    String ns = tenant("node-watch-start");
    List<String> vms = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      String vm = unique("vm-nw-s" + i);
      vms.add(vm);
      world.guest().kwokNodes().createNamed(vm, Map.of());
      vmi(world.infra(), ns, vm, "tenant", "External");
      running(world.infra(), ns, vm, "infra-node-nw-6");
    }
    // One node still carries our mark from an evacuation before a restart (of the VMI's old UID).
    Map<String, Integer> calls = uncordonedAfterARestart(ns, vms.get(3), vms.get(3));
    // A check costs one GET and starts no watch: a restart reads no tenant's every node.
    assertEquals(0, calls.getOrDefault("list", 0), "no node list: " + calls);
    assertEquals(8, calls.getOrDefault("get", 0), "one GET per check: " + calls);
    assertEquals(1, calls.getOrDefault("patch", 0), "the one uncordon: " + calls);
  }

  @Test
  void atStartTheChecksOfVmisWhoseNodesHaveOtherNamesShareOneNodeList() throws Exception {
    String ns = tenant("node-watch-provided");
    List<String> vms = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      String vm = unique("vm-nw-p" + i);
      vms.add(vm);
      // Named otherwise, found by the providerID the KubeVirt cloud provider sets.
      String node = world.guest().kwokNodes().createNamed("other-" + vm, Map.of());
      world
          .guest()
          .kubectl()
          .runOrFail(
              null,
              "patch",
              "node",
              node,
              "--type=merge",
              "-p",
              "{\"spec\":{\"providerID\":\"kubevirt://" + vm + "\"}}");
      vmi(world.infra(), ns, vm, "tenant", "External");
      running(world.infra(), ns, vm, "infra-node-nw-7");
    }
    Map<String, Integer> calls = uncordonedAfterARestart(ns, vms.get(5), "other-" + vms.get(5));
    // Each check asks for the node of its VMI's name (none), then looks in one shared list.
    assertEquals(8, calls.getOrDefault("get", 0), "one GET per check: " + calls);
    assertEquals(1, calls.getOrDefault("list", 0), "one node list for the 8 checks: " + calls);
    assertEquals(1, calls.getOrDefault("patch", 0), "the one uncordon: " + calls);
  }

  @Test
  void anAdminsCordonMadeWhileTheWatchRunsIsHonouredNeitherMarkedOursNorUndone() throws Exception {
    String ns = tenant("node-watch-admin");
    String first = unique("vm-nw-first");
    String second = unique("vm-nw-second");
    world.guest().kwokNodes().createNamed(first, Map.of());
    world.guest().kwokNodes().createNamed(second, Map.of());
    String firstUid = vmi(world.infra(), ns, first, "tenant", "External");
    String secondUid = vmi(world.infra(), ns, second, "tenant", "External");
    world.startController(ns);

    // The first evacuation starts the cluster's node watch.
    evacuate(world.infra(), ns, first, "infra-node-nw-3");
    awaitDeleted(world.infra(), ns, first, firstUid);
    // Then an admin cordons the second VM's node, and the second VMI is evacuated at once.
    EvictionFixture.cordon(world.guest(), second, true);
    evacuate(world.infra(), ns, second, "infra-node-nw-3");
    awaitDeleted(world.infra(), ns, second, secondUid);
    assertEquals(
        Optional.empty(),
        nodeAnnotation(node(world.guest(), second), EvictionAnnotations.CORDONED_BY),
        "an admin's cordon is not marked ours");

    // Recreated and running: the first node is uncordoned, the admin's stays cordoned.
    recreatedRunning(world.infra(), ns, second, "tenant", "infra-node-nw-4");
    recreatedRunning(world.infra(), ns, first, "tenant", "infra-node-nw-4");
    awaitEvent(world.infra(), ns, first, "GuestNodeUncordoned");
    assertTrue(unschedulable(node(world.guest(), second)), "the admin's cordon stays");
  }

  @Test
  void aGuestIdentityThatMayNotListNodesStillEvacuatesReadingItsNodeByName() throws Exception {
    String user = unique("no-node-list");
    world.guestApply(
        """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRole
            metadata: {name: %1$s}
            rules:
            - {apiGroups: [""], resources: [nodes], verbs: [get, patch]}
            - {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
            - {apiGroups: [""], resources: [pods/eviction], verbs: [create]}
            - {apiGroups: [""], resources: [events], verbs: [get, create, patch]}
            - {apiGroups: [policy], resources: [poddisruptionbudgets], verbs: [list, watch]}
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRoleBinding
            metadata: {name: %1$s}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %1$s}
            subjects: [{kind: User, name: %1$s, apiGroup: rbac.authorization.k8s.io}]
            """
            .formatted(user));
    String ns = tenant("node-watch-rbac", world.guest().kubeconfigFor(user, "tenant-operators"));
    String vm = unique("vm-nw-rbac");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    String uid = vmi(world.infra(), ns, vm, "tenant", "External");
    // A worker by CAPK's label: admission needs no node list for it (it does to tell a role).
    world.infraKubectl("-n", ns, "label", "vmi", vm, "cluster.x-k8s.io/role=worker");
    world.startController(ns);

    evacuate(world.infra(), ns, vm, "infra-node-nw-5");
    awaitDeleted(world.infra(), ns, vm, uid);
    assertTrue(unschedulable(node(world.guest(), vm)), "cordoned by name");
    assertEquals(
        Optional.of(uid),
        nodeAnnotation(node(world.guest(), vm), EvictionAnnotations.CORDONED_BY),
        "and marked ours");
  }

  private String tenant(String prefix) throws Exception {
    return tenant(prefix, world.guest().kubeconfigFor(AuditLog.USER, "system:masters"));
  }

  private String tenant(String prefix, String guestKubeconfig) throws Exception {
    String ns = unique(prefix);
    world.tenant(ns, "tenant", guestKubeconfig);
    return ns;
  }

  /** The audit policy: the controller's identity's requests on nodes, nothing else. */
  private static List<String> auditFlags() {
    return AuditLog.apiServerFlags(
        AUDIT,
        "guest-nodewatch",
        """
        - level: Metadata
          users: ["%s"]
          resources: [{group: "", resources: ["nodes"]}]
        """
            .formatted(AuditLog.USER));
  }

  /** The controller's requests on nodes received since {@code from}, by verb (WATCH apart). */
  /**
   * Marks {@code node} cordoned by us for a UID from before a restart, starts the controller, and
   * awaits the uncordon of VMI {@code vm}'s node: the guest node requests from the start on.
   */
  private static Map<String, Integer> uncordonedAfterARestart(String ns, String vm, String node)
      throws Exception {
    EvictionFixture.cordon(world.guest(), node, true);
    world
        .guest()
        .kubectl()
        .runOrFail(
            null,
            "annotate",
            "node",
            node,
            EvictionAnnotations.CORDONED_BY + "=uid-before-the-restart");
    Instant from = Instant.now();
    world.startController(ns);
    awaitEvent(world.infra(), ns, vm, "GuestNodeUncordoned");
    assertFalse(unschedulable(node(world.guest(), node)), "uncordoned");
    return nodeRequests(from);
  }

  private static Map<String, Integer> nodeRequests(Instant from) {
    Map<String, Integer> byVerb = new TreeMap<>();
    AuditLog.count(AuditLog.logOf(AUDIT, "guest-nodewatch"), from, Instant.now().plusSeconds(1))
        .forEach((what, n) -> byVerb.merge(what.replace(" nodes", ""), n, Integer::sum));
    return byVerb;
  }
}
