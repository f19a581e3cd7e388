package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.annotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.deletedOrDeleting;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.get;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.running;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.TricklingProxy;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.PatchUtils;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Issue 29 items 5 and 6, against real API servers: the deadline's warning names the pod that held
 * the drain and the finalizer that kept it; and a VMI whose key a slow uncordon check held when
 * KubeVirt marked it records the mark's moment as its drain start, not the moment a worker got to
 * it.
 */
class DrainStartAndDeadlineIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  /** Short, for a test; long enough for the drain to evict the pod well before it. */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(30);

  static final String NS = "ev-start-deadline";
  static final String TRICKLING = "slow-tenant";
  static final String HEALTHY = "plain-tenant";
  static final String FINALIZER = "example.com/keep";

  static TricklingProxy proxy;

  @BeforeAll
  static void start() throws Exception {
    proxy = world.tricklingAndHealthyTenants(NS, TRICKLING, HEALTHY);
    world.startLeaderElectedController(
        "vmi-eviction-start-deadline-it",
        NS,
        flags(
            "--workers 2 --drain-timeout %ds --drain-retry-interval 1s --drain-attempt-timeout 3s"
                .formatted(DRAIN_TIMEOUT.toSeconds())));
  }

  /** Beside the other test: it waits out a deadline on the healthy tenant's own guest node. */
  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void theDeadlineWarningNamesThePodAFinalizerKeptAndTheFinalizer() throws Exception {
    String vm = unique("vm-keep");
    String ns = unique("keep");
    // No kubelet confirms deletions here (kwok would, and clear finalizers too): the finalizer
    // alone keeps the pod, whose grace period is 0.
    EvictionFixture.readyNodeWithoutKubelet(world.guest(), vm);
    EvictionFixture.namespaceWithServiceAccount(world.guest(), ns);
    CoreV1Api core = new CoreV1Api(world.guest().client());
    world.guestApply(
        """
            {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "kept-0", "namespace": "%s", "finalizers": ["%s"]},
             "spec": {"nodeName": "%s", "terminationGracePeriodSeconds": 0,
                      "containers": [{"name": "main", "image": "kept:fake"}]}}
            """
            .formatted(ns, FINALIZER, vm));
    String uid = vmi(world.infra(), NS, vm, HEALTHY, "External");
    evacuate(world.infra(), NS, vm, "infra-node-d1");

    Await.until(
        "the pod evicted, kept terminating by its finalizer",
        WAIT,
        () ->
            core.readNamespacedPod("kept-0", ns).execute().getMetadata().getDeletionTimestamp()
                != null);
    Await.until(
        "VMI " + vm + " deleted at its deadline",
        DRAIN_TIMEOUT.plus(WAIT),
        () -> deletedOrDeleting(world.infra(), NS, vm, uid));
    CoreV1Event passed = awaitEvent(world.infra(), NS, vm, "DrainDeadlinePassed");
    assertTrue(
        passed
            .getMessage()
            .contains(
                "Still blocking: 1 pod(s) left: "
                    + ns
                    + "/kept-0 (terminating behind finalizer "
                    + FINALIZER
                    + ")"),
        passed.getMessage());
    V1Pod kept = core.readNamespacedPod("kept-0", ns).execute();
    assertEquals(List.of(FINALIZER), kept.getMetadata().getFinalizers(), "the pod is still there");

    // Let the pod go, so that nothing of this test outlives it.
    PatchUtils.patch(
        V1Pod.class,
        () ->
            core.patchNamespacedPod(
                    "kept-0", ns, new V1Patch("{\"metadata\":{\"finalizers\":null}}"))
                .buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
        world.guest().client());
  }

  @Test
  void aMarkSeenWhileASlowUncordonCheckHeldTheVmiStartsTheDrainAtTheMark() throws Exception {
    String vm = unique("vm-mark");
    proxy.arm();
    String uid = vmi(world.infra(), NS, vm, TRICKLING, "External");
    int before = proxy.acceptedConnections();
    // Running and not marked: its uncordon check asks the slow guest for our marks, holding the
    // VMI's key (the work queue never runs two steps of one VMI at once) for seconds.
    running(world.infra(), NS, vm, "infra-node-s1");
    Await.until(
        "the uncordon check reached the slow guest",
        WAIT,
        () -> proxy.acceptedConnections() > before);

    Instant marked = Instant.now();
    evacuate(world.infra(), NS, vm, "infra-node-s1");

    String[] start = new String[1];
    Await.until(
        "the drain start recorded on " + vm,
        DRAIN_TIMEOUT.plus(WAIT),
        () -> {
          Optional<String> recorded =
              get(world.infra(), NS, vm)
                  .flatMap(o -> annotation(o, EvictionAnnotations.DRAIN_START_TIME));
          recorded.ifPresent(r -> start[0] = r);
          return recorded.isPresent();
        });
    Duration off = Duration.between(marked, Instant.parse(start[0])).abs();
    assertTrue(
        off.compareTo(Duration.ofSeconds(1)) <= 0,
        "drain start " + start[0] + " is " + off + " from the mark at " + marked);

    // Gone, so that its evacuation through the slow guest does not outlive this test.
    new io.kubernetes.client.openapi.apis.CustomObjectsApi(world.infra().client())
        .deleteNamespacedCustomObject("kubevirt.io", "v1", NS, "virtualmachineinstances", vm)
        .execute();
    Await.until("VMI " + vm + " gone", WAIT, () -> deletedOrDeleting(world.infra(), NS, vm, uid));
  }
}
