package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.annotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.event;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.get;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.nodeAnnotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.running;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.util.PatchUtils;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The VMI eviction controller against real control planes: an infra cluster holding the VMIs, the
 * Cluster API Clusters and kubeconfig Secrets, and guest clusters whose nodes run inside those
 * VMIs. The controller runs through its Main with flags and a kubeconfig holding a ServiceAccount
 * token bound only to the RBAC in {@code config/rbac}.
 */
class VmiEvictionControllerIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  /** Short, so the deadline paths run in seconds. Normal drains here finish well within it. */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(30);

  static final String NS = "ev-tenants";
  static final String BROKEN_NS = "ev-broken";
  static final String TENANT = "tenant-a";
  static final String INFRA_NODE = "infra-node-7";
  static final String KUBEVIRT_NS = "ev-kubevirt";

  /** Restarted by a test and used by others: this class closes it itself. */
  static Manager manager;

  @BeforeAll
  static void start() throws Exception {
    EvictionFixture.namespace(world.infra(), BROKEN_NS);
    world.tenant(NS, TENANT, world.guest());
    // KubeVirt's cluster-wide default, for VMIs that set no strategy of their own.
    world.kubeVirtWithStrategy(KUBEVIRT_NS, "External");
    manager = startController();
  }

  @AfterAll
  static void stop() {
    // Before the world deletes KubeVirt's CR.
    if (manager != null) {
      manager.close();
    }
  }

  static Manager startController() throws Exception {
    return EvictionFixture.startManager(
        world.controllerKubeconfig(),
        "vmi-eviction-it",
        flags(
            "--metrics-bind-address 127.0.0.1:0 --namespace %s --namespace %s --drain-timeout %ds"
                    .formatted(NS, BROKEN_NS, DRAIN_TIMEOUT.toSeconds())
                + " --drain-retry-interval 1s --drain-attempt-timeout 3s --workers 4"));
  }

  /** A guest node named like the VM, and a spare node its pods can move to. */
  static List<String> guestNodes(String vm) {
    String spare = "spare-" + vm;
    world.guest().kwokNodes().createNamed(vm, Map.of());
    world.guest().kwokNodes().createNamed(spare, Map.of());
    return List.of(vm, spare);
  }

  // -----------------------------------------------------------------------------------------------

  @Test
  void externalVmiMarkedForEvacuationHasItsGuestNodeCordonedDrainedThenIsDeletedAndLaterUncordoned()
      throws Exception {
    String vm = unique("vm-drain");
    List<String> nodes = guestNodes(vm);
    String spare = nodes.get(1);
    // All pods start on the VM's node (the spare is cordoned), and may move to the spare later.
    EvictionFixture.cordon(world.guest(), spare, true);
    String guestNs = unique("shop");
    workload(world.guest(), guestNs, "web", 2, 1, nodes);
    assertEquals(2, podsOn(world.guest(), guestNs, vm).size());
    EvictionFixture.cordon(world.guest(), spare, false);

    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    // The infra node being drained is not the guest node's name: the normal case.
    evacuate(world.infra(), NS, vm, INFRA_NODE);

    awaitDeleted(world.infra(), NS, vm, uid);
    V1Node n = node(world.guest(), vm);
    assertTrue(unschedulable(n), "guest node cordoned");
    assertEquals(
        Optional.of(uid),
        nodeAnnotation(n, EvictionAnnotations.CORDONED_BY),
        "cordon recorded for the VMI");
    assertTrue(
        podsOn(world.guest(), guestNs, vm).stream()
            .allMatch(p -> p.getMetadata().getDeletionTimestamp() != null),
        "no pod left running on the drained node");
    Await.until(
        "both replicas running on the spare node",
        WAIT,
        () ->
            running(world.guest(), guestNs, "web").stream()
                    .filter(p -> spare.equals(p.getSpec().getNodeName()))
                    .count()
                == 2);
    // One event tells the drain and the deletion.
    assertTrue(
        awaitEvent(world.infra(), NS, vm, "DrainSucceeded")
            .getMessage()
            .contains("; VMI deleted so that"));
    assertTrue(
        event(world.infra(), NS, vm, "DrainDeadlinePassed").isEmpty(),
        "deleted because drained, not at the deadline");
    // The guest cluster's users see it on their Node too.
    awaitEvent(world.guest(), "default", vm, "GuestNodeCordoned");
    awaitEvent(world.guest(), "default", vm, "DrainSucceeded");
    assertFalse(nodes.contains(INFRA_NODE));

    // KubeVirt recreates the VMI (new UID) elsewhere; once it runs and the guest node is Ready, the
    // node the controller cordoned is uncordoned and the mark removed.
    String newUid = EvictionFixture.recreatedRunning(world.infra(), NS, vm, TENANT, "infra-node-8");
    assertNotEquals(uid, newUid);
    Await.until(
        "guest node " + vm + " uncordoned", WAIT, () -> !unschedulable(node(world.guest(), vm)));
    assertEquals(
        Optional.empty(), nodeAnnotation(node(world.guest(), vm), EvictionAnnotations.CORDONED_BY));
    awaitEvent(world.infra(), NS, vm, "GuestNodeUncordoned");
  }

  @Test
  void aVmiOfAClusterBeingDeletedIsDrainedAsUsualAndToldSo() throws Exception {
    // A tenant going away: its Cluster deleted, kept by a finalizer (Cluster API's own, in life).
    String gone = unique("tenant-gone");
    world.infraApply(
        """
            apiVersion: cluster.x-k8s.io/v1beta1
            kind: Cluster
            metadata: {name: %s, namespace: %s, finalizers: [example.com/keep]}
            spec:
              infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: KubevirtCluster, name: %1$s}
            """
            .formatted(gone, NS));
    EvictionFixture.kubeconfigSecret(world.infra(), NS, gone, world.guest().adminKubeconfigYaml());
    try {
      world.infraKubectl("-n", NS, "delete", "clusters.cluster.x-k8s.io", gone, "--wait=false");
      assertFalse(
          world
              .infraKubectl(
                  "-n",
                  NS,
                  "get",
                  "clusters.cluster.x-k8s.io",
                  gone,
                  "-o",
                  "jsonpath={.metadata.deletionTimestamp}")
              .isBlank(),
          "the Cluster is being deleted, kept by its finalizer");

      String vm = unique("vm-gone");
      List<String> nodes = guestNodes(vm);
      String guestNs = unique("leaving");
      workload(world.guest(), guestNs, "web", 2, 1, nodes);
      String uid = vmi(world.infra(), NS, vm, gone, "External");
      evacuate(world.infra(), NS, vm, INFRA_NODE);

      awaitDeleted(world.infra(), NS, vm, uid);
      assertTrue(unschedulable(node(world.guest(), vm)), "guest node cordoned");
      assertTrue(
          podsOn(world.guest(), guestNs, vm).stream()
              .allMatch(p -> p.getMetadata().getDeletionTimestamp() != null),
          "no pod left running on the drained node");
      assertTrue(
          awaitEvent(world.infra(), NS, vm, "DrainSucceeded")
              .getMessage()
              .contains("; VMI deleted so that"));
      CoreV1Event deleting = awaitEvent(world.infra(), NS, vm, "ClusterDeleting");
      assertEquals("Normal", deleting.getType());
      assertEquals(1, deleting.getCount() == null ? 1 : deleting.getCount(), "said once");
      assertTrue(
          deleting.getMessage().contains("Cluster " + NS + "/" + gone + " is being deleted")
              && deleting.getMessage().contains("the evacuation proceeds as usual"),
          deleting.getMessage());
      assertTrue(
          event(world.infra(), NS, vm, "DrainDeadlinePassed").isEmpty(), "drained, not timed out");
    } finally {
      world.infraKubectl(
          "-n",
          NS,
          "patch",
          "clusters.cluster.x-k8s.io",
          gone,
          "--type=merge",
          "-p",
          "{\"metadata\":{\"finalizers\":null}}");
    }
  }

  @Test
  void budgetThatNeverAllowsDisruptionDelaysDeletionToTheDeadlineWhichSurvivesARestart()
      throws Exception {
    String vm = unique("vm-pdb");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    String guestNs = unique("db");
    workload(world.guest(), guestNs, "db", 1, 1, List.of(vm));

    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    evacuate(world.infra(), NS, vm, INFRA_NODE);
    awaitEvent(world.infra(), NS, vm, "DrainBlocked");
    String start =
        annotation(get(world.infra(), NS, vm).orElseThrow(), EvictionAnnotations.DRAIN_START_TIME)
            .orElseThrow();
    assertFalse(
        EvictionFixture.deletedOrDeleting(world.infra(), NS, vm, uid),
        "blocked drain: VMI kept before the deadline");

    // Restart the controller mid-drain: the recorded start, and so the deadline, stay.
    manager.close();
    assertEquals(
        null,
        new CoordinationV1Api(world.infra().client())
            .readNamespacedLease("vmi-eviction-it", EvictionFixture.CONTROLLER_NAMESPACE)
            .execute()
            .getSpec()
            .getHolderIdentity(),
        "a cleanly stopped controller releases its lease");
    manager = startController();
    Await.until(
        "VMI deleted at the deadline",
        WAIT,
        () -> {
          Optional<Map<String, Object>> v = get(world.infra(), NS, vm);
          if (v.isPresent() && EvictionFixture.uid(v.get()).equals(uid)) {
            assertEquals(
                Optional.of(start),
                annotation(v.get(), EvictionAnnotations.DRAIN_START_TIME),
                "start kept");
          }
          return EvictionFixture.deletedOrDeleting(world.infra(), NS, vm, uid);
        });
    CoreV1Event warning = awaitEvent(world.infra(), NS, vm, "DrainDeadlinePassed");
    assertTrue(
        warning.getMessage().contains(guestNs + "/db-pdb"),
        "names the blocking budget: " + warning.getMessage());
    assertEquals("Warning", warning.getType());
    CoreV1Event deleted = awaitEvent(world.infra(), NS, vm, "VMIDeleted");
    Instant deadline = OffsetDateTime.parse(start).toInstant().plus(DRAIN_TIMEOUT);
    assertFalse(
        deleted.getFirstTimestamp().toInstant().isBefore(deadline.minusSeconds(1)),
        "not deleted before the deadline " + deadline + ": " + deleted.getFirstTimestamp());
    assertEquals(
        1,
        running(world.guest(), guestNs, "db").size(),
        "the budget was honoured: the pod was never evicted");
  }

  @Test
  void vmisThatAreNotExternalNotEvacuatingOrAlreadyDeletingAreLeftUntouched() throws Exception {
    String liveMigrate = unique("vm-lm");
    String quiet = unique("vm-quiet");
    String dying = unique("vm-dying");
    for (String vm : List.of(liveMigrate, quiet, dying)) {
      world.guest().kwokNodes().createNamed(vm, Map.of());
    }
    String lmUid = vmi(world.infra(), NS, liveMigrate, TENANT, "LiveMigrate");
    evacuate(world.infra(), NS, liveMigrate, INFRA_NODE);
    String quietUid = vmi(world.infra(), NS, quiet, TENANT, "External");
    EvictionFixture.running(world.infra(), NS, quiet, INFRA_NODE);
    String dyingUid = vmi(world.infra(), NS, dying, TENANT, "External");
    world.infraKubectl(
        "-n",
        NS,
        "patch",
        "vmi",
        dying,
        "--type=merge",
        "-p",
        "{\"metadata\":{\"finalizers\":[\"test.capk.dev/hold\"]}}");
    world.infraKubectl("-n", NS, "delete", "vmi", dying, "--wait=false");
    evacuate(world.infra(), NS, dying, INFRA_NODE);

    // Not CAPK's (no kubevirt-machine-name label): outside the informer's label selector.
    String foreign = unique("vm-foreign");
    world.guest().kwokNodes().createNamed(foreign, Map.of());
    world.infraApply(
        """
        apiVersion: kubevirt.io/v1
        kind: VirtualMachineInstance
        metadata:
          name: %s
          namespace: %s
          labels: {cluster.x-k8s.io/cluster-name: %s}
        spec:
          evictionStrategy: External
          domain: {devices: {}}
        """
            .formatted(foreign, NS, TENANT));
    evacuate(world.infra(), NS, foreign, INFRA_NODE);

    // A VMI that must be processed, queued after the others: once it is gone, they have been seen.
    String barrier = unique("vm-barrier");
    String barrierUid = vmi(world.infra(), NS, barrier, TENANT, "External");
    evacuate(world.infra(), NS, barrier, INFRA_NODE);
    awaitDeleted(world.infra(), NS, barrier, barrierUid);
    awaitEvent(world.infra(), NS, barrier, "GuestNodeNotFound");
    Thread.sleep(1000);

    for (String vm : List.of(liveMigrate, quiet, dying, foreign)) {
      Map<String, Object> v = get(world.infra(), NS, vm).orElseThrow();
      assertEquals(
          Optional.empty(),
          annotation(v, EvictionAnnotations.DRAIN_START_TIME),
          vm + " not annotated");
      assertFalse(unschedulable(node(world.guest(), vm)), vm + "'s guest node not cordoned");
      assertTrue(EvictionFixture.events(world.infra(), NS, vm).isEmpty(), vm + " has no events");
    }
    assertEquals(lmUid, EvictionFixture.uid(get(world.infra(), NS, liveMigrate).orElseThrow()));
    assertFalse(EvictionFixture.deleting(get(world.infra(), NS, liveMigrate).orElseThrow()));
    assertFalse(EvictionFixture.deleting(get(world.infra(), NS, quiet).orElseThrow()));
    assertEquals(quietUid, EvictionFixture.uid(get(world.infra(), NS, quiet).orElseThrow()));
    assertEquals(dyingUid, EvictionFixture.uid(get(world.infra(), NS, dying).orElseThrow()));
    world.infraKubectl(
        "-n",
        NS,
        "patch",
        "vmi",
        dying,
        "--type=merge",
        "-p",
        "{\"metadata\":{\"finalizers\":null}}");
  }

  @Test
  void vmiWithoutAStrategyFollowsKubeVirtsClusterDefault() throws Exception {
    String vm = unique("vm-default");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    String uid = vmi(world.infra(), NS, vm, TENANT, null);
    evacuate(world.infra(), NS, vm, INFRA_NODE);

    awaitDeleted(world.infra(), NS, vm, uid);
    assertTrue(unschedulable(node(world.guest(), vm)));
    awaitEvent(world.infra(), NS, vm, "DrainSucceeded");
  }

  @Test
  void guestNodeFoundByProviderIdWhenNotNamedLikeTheVmi() throws Exception {
    String vm = unique("vm-pid");
    String nodeName = unique("guest-worker");
    world.guest().kwokNodes().createNamed(nodeName, Map.of());
    PatchUtils.patch(
        V1Node.class,
        () ->
            new CoreV1Api(world.guest().client())
                .patchNode(
                    nodeName, new V1Patch("{\"spec\":{\"providerID\":\"kubevirt://" + vm + "\"}}"))
                .buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
        world.guest().client());

    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    evacuate(world.infra(), NS, vm, INFRA_NODE);

    awaitDeleted(world.infra(), NS, vm, uid);
    V1Node n = node(world.guest(), nodeName);
    assertTrue(unschedulable(n));
    assertEquals(Optional.of(uid), nodeAnnotation(n, EvictionAnnotations.CORDONED_BY));
    awaitEvent(world.infra(), NS, vm, "DrainSucceeded");
  }

  @Test
  void nodeAnAdminCordonedIsDrainedButStaysCordonedAfterTheVmiComesBack() throws Exception {
    String vm = unique("vm-admin");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    EvictionFixture.cordon(world.guest(), vm, true);

    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    evacuate(world.infra(), NS, vm, INFRA_NODE);
    awaitDeleted(world.infra(), NS, vm, uid);
    assertEquals(
        Optional.empty(),
        nodeAnnotation(node(world.guest(), vm), EvictionAnnotations.CORDONED_BY),
        "not ours");

    EvictionFixture.recreatedRunning(world.infra(), NS, vm, TENANT, "infra-node-8");
    // The uncordon check of the new VMI finds no mark: the controller records that and stops.
    String barrier = unique("vm-barrier");
    String barrierUid = vmi(world.infra(), NS, barrier, TENANT, "External");
    evacuate(world.infra(), NS, barrier, INFRA_NODE);
    awaitDeleted(world.infra(), NS, barrier, barrierUid);
    Thread.sleep(1000);
    assertTrue(
        unschedulable(node(world.guest(), vm)),
        "an admin's cordon is never lifted by the controller");
    assertTrue(event(world.infra(), NS, vm, "GuestNodeUncordoned").isEmpty());
  }

  @Test
  void missingClusterMissingSecretAndBadKubeconfigAreEventedAndTheDeadlineStillFires()
      throws Exception {
    // No Cluster at all.
    String noCluster = unique("vm-nocluster");
    String noClusterUid = vmi(world.infra(), BROKEN_NS, noCluster, "no-such-cluster", "External");
    evacuate(world.infra(), BROKEN_NS, noCluster, INFRA_NODE);
    // A Cluster whose kubeconfig Secret holds no usable kubeconfig.
    String badConfig = unique("vm-badcfg");
    EvictionFixture.cluster(world.infra(), BROKEN_NS, "garbled");
    String secretLooking = "c2VjcmV0LXRva2VuLXNob3VsZC1uZXZlci1sZWFr";
    EvictionFixture.kubeconfigSecret(
        world.infra(), BROKEN_NS, "garbled", "token: " + secretLooking + "\n: not yaml [");
    String badConfigUid = vmi(world.infra(), BROKEN_NS, badConfig, "garbled", "External");
    evacuate(world.infra(), BROKEN_NS, badConfig, INFRA_NODE);
    // A Cluster whose Secret appears later: the controller recovers and drains.
    String late = unique("vm-late");
    world.guest().kwokNodes().createNamed(late, Map.of());
    EvictionFixture.cluster(world.infra(), BROKEN_NS, "late-secret");
    String lateUid = vmi(world.infra(), BROKEN_NS, late, "late-secret", "External");
    evacuate(world.infra(), BROKEN_NS, late, INFRA_NODE);

    awaitEvent(world.infra(), BROKEN_NS, noCluster, "ClusterNotFound");
    CoreV1Event invalid = awaitEvent(world.infra(), BROKEN_NS, badConfig, "KubeconfigInvalid");
    assertFalse(
        invalid.getMessage().contains(secretLooking),
        "no secret content in events: " + invalid.getMessage());
    awaitEvent(world.infra(), BROKEN_NS, late, "KubeconfigSecretNotFound");
    assertFalse(EvictionFixture.deletedOrDeleting(world.infra(), BROKEN_NS, late, lateUid));

    EvictionFixture.kubeconfigSecret(
        world.infra(), BROKEN_NS, "late-secret", world.guest().adminKubeconfigYaml());
    awaitDeleted(world.infra(), BROKEN_NS, late, lateUid);
    assertTrue(unschedulable(node(world.guest(), late)), "recovered: the guest node was drained");
    awaitEvent(world.infra(), BROKEN_NS, late, "DrainSucceeded");

    awaitDeleted(world.infra(), BROKEN_NS, noCluster, noClusterUid);
    awaitDeleted(world.infra(), BROKEN_NS, badConfig, badConfigUid);
    for (String vm : List.of(noCluster, badConfig)) {
      CoreV1Event deadline = awaitEvent(world.infra(), BROKEN_NS, vm, "DrainDeadlinePassed");
      assertFalse(deadline.getMessage().contains(secretLooking));
    }
    assertTrue(
        awaitEvent(world.infra(), BROKEN_NS, noCluster, "DrainDeadlinePassed")
            .getMessage()
            .contains("not found"));
  }

  @Test
  void rotatedKubeconfigSecretIsPickedUp() throws Exception {
    String cluster = "rotating";
    EvictionFixture.cluster(world.infra(), BROKEN_NS, cluster);
    EvictionFixture.kubeconfigSecret(
        world.infra(), BROKEN_NS, cluster, world.guest().adminKubeconfigYaml());
    String vm = unique("vm-rot");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    String guestNs = unique("rot");
    workload(world.guest(), guestNs, "keep", 1, 1, List.of(vm));

    String uid = vmi(world.infra(), BROKEN_NS, vm, cluster, "External");
    evacuate(world.infra(), BROKEN_NS, vm, INFRA_NODE);
    awaitEvent(world.infra(), BROKEN_NS, vm, "DrainBlocked");

    // A kubeconfig whose identity the guest does not authorise: the new client is used at once.
    EvictionFixture.kubeconfigSecret(
        world.infra(), BROKEN_NS, cluster, world.guest().kubeconfigFor("nobody", "nobody-group"));
    CoreV1Event forbidden = awaitEvent(world.infra(), BROKEN_NS, vm, "GuestAPIForbidden");
    assertEquals("Warning", forbidden.getType());
    assertEquals(
        1,
        podsOn(world.guest(), guestNs, vm).size(),
        "nothing evicted with an identity the guest refuses");

    // Back to an authorised identity: the drain goes on through the newest Secret.
    EvictionFixture.kubeconfigSecret(
        world.infra(), BROKEN_NS, cluster, world.guest().adminKubeconfigYaml());
    world.guest().kubectl().runOrFail(null, "-n", guestNs, "delete", "pdb", "keep-pdb");
    awaitDeleted(world.infra(), BROKEN_NS, vm, uid);
    CoreV1Event drained = awaitEvent(world.infra(), BROKEN_NS, vm, "DrainSucceeded");
    assertEquals("Normal", drained.getType());
    assertTrue(
        podsOn(world.guest(), guestNs, vm).stream()
            .allMatch(p -> p.getMetadata().getDeletionTimestamp() != null),
        "the pod was evicted from the guest node");
    assertTrue(
        event(world.infra(), BROKEN_NS, vm, "DrainDeadlinePassed").isEmpty(),
        "drained, not timed out");
  }

  @Test
  void aSecondReplicaStandsByWhileTheLeaderHoldsTheLease() throws Exception {
    CoordinationV1Api coordination = new CoordinationV1Api(world.infra().client());
    Await.until(
        "the running controller holds the lease",
        WAIT,
        () ->
            manager
                .identity()
                .equals(
                    coordination
                        .readNamespacedLease(
                            "vmi-eviction-it", EvictionFixture.CONTROLLER_NAMESPACE)
                        .execute()
                        .getSpec()
                        .getHolderIdentity()));
    Manager standby = startController();
    try {
      // Longer than the lease duration (4s): an expired or ignored lease would have changed hands.
      Thread.sleep(6000);
      assertEquals(
          manager.identity(),
          coordination
              .readNamespacedLease("vmi-eviction-it", EvictionFixture.CONTROLLER_NAMESPACE)
              .execute()
              .getSpec()
              .getHolderIdentity(),
          "the leader keeps the lease; the standby waits");
    } finally {
      standby.close();
    }
  }

  @Test
  void probesAndMetricsAreServed() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    var probes = manager.probesAddress();
    for (String path : List.of("/healthz", "/readyz")) {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + probes.getPort() + path))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), path);
    }
    HttpResponse<String> metrics =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:" + manager.metricsAddress().getPort() + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, metrics.statusCode());
    List<String> expected =
        new ArrayList<>(
            List.of(
                "vmi_eviction_evacuations_in_progress",
                "vmi_eviction_evacuation_duration_seconds",
                "vmi_eviction_guest_clients_cached",
                "vmi_eviction_evacuations_started",
                "vmi_eviction_drain_step_duration_seconds",
                "vmi_eviction_reconcile_duration_seconds",
                "vmi_eviction_reconcile_duration_max_seconds",
                // The Java client's controller framework's, served beside ours.
                "controller_work_queue_length{name=\""));
    for (String name : expected) {
      assertTrue(metrics.body().contains(name), name + " exported");
    }
  }
}
