package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.annotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.deletedOrDeleting;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.event;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.get;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.podsOn;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.RefusingProxy;
import io.kubernetes.client.openapi.models.CoreV1Event;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 29 item 4, an unknown is never a default: the infra API server answers 429 (as API Priority
 * and Fairness does under load) to some of the controller's reads, through a proxy in front of the
 * real API server that refuses those and passes every other request on. A VMI that sets no strategy
 * of its own, under a KubeVirt CR that sets External, is neither left to KubeVirt nor evacuated on
 * a guess while the lists of KubeVirt CRs fail; a Warning names the failed read; once a list
 * answers, the VMI is evacuated. Likewise a Machine that cannot be read is not taken for "no
 * Machine": its exclusion from draining is honoured once it is read.
 */
class UnreadableKubeVirtConfigIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  static final String NS = "ev-unreadable-kv";
  static final String KUBEVIRT_NS = "ev-unreadable-kubevirt";
  static final String TENANT = "tenant-kv";
  static final String INFRA_NODE = "infra-node-kv";

  static final Predicate<String> KUBEVIRT_LISTS =
      line -> line.startsWith("GET /apis/kubevirt.io/v1/kubevirts");

  /** Cluster API Machines of the test's namespace: the informer's lists and watches, and GETs. */
  static final Predicate<String> MACHINE_READS =
      line ->
          line.matches(
              "GET /apis/cluster\\.x-k8s\\.io/[^/]+/namespaces/" + NS + "/machines[/? ].*");

  static RefusingProxy proxy;

  @BeforeAll
  static void start() throws Exception {
    // Only the lists of KubeVirt CRs are refused, from the controller's first; the informers,
    // leader election and every write go through to the real server.
    // Closed once the controller is.
    proxy = world.closeAfterAll(RefusingProxy.start(world.infra()));
    proxy.refuse(KUBEVIRT_LISTS);
    // The Machines' cache never fills while their reads are refused: a step reads by GET.
    proxy.refuse(MACHINE_READS);
    Path kubeconfig = world.controllerKubeconfig(proxy.url(), proxy.caCertificatePem());
    world.tenant(NS, TENANT, world.guest());
    world.kubeVirtWithStrategy(KUBEVIRT_NS, "External");
    world.startLeaderElectedController(
        kubeconfig,
        "vmi-eviction-unreadable-kv-it",
        NS,
        flags("--drain-timeout 5m --drain-retry-interval 1s --drain-attempt-timeout 3s"));
  }

  @Test
  void aVmiWithoutItsOwnStrategyWaitsWhileTheKubeVirtCrCannotBeListedAndIsEvacuatedOnceItCan()
      throws Exception {
    String vm = unique("vm-kv");
    String spare = "spare-" + vm;
    world.guest().kwokNodes().createNamed(vm, Map.of());
    world.guest().kwokNodes().createNamed(spare, Map.of());
    // The pod starts on the VM's node (the spare is cordoned), and may move to the spare later.
    EvictionFixture.cordon(world.guest(), spare, true);
    String guestNs = unique("kv-shop");
    workload(world.guest(), guestNs, "web", 1, 0, List.of(vm, spare));
    assertEquals(1, podsOn(world.guest(), guestNs, vm).size());
    EvictionFixture.cordon(world.guest(), spare, false);

    String uid =
        vmi(world.infra(), NS, vm, TENANT, null); // no spec.evictionStrategy: the CR's applies
    evacuate(world.infra(), NS, vm, INFRA_NODE);

    CoreV1Event told = awaitEvent(world.infra(), NS, vm, "KubeVirtConfigUnreadable");
    assertEquals("Warning", told.getType());
    assertTrue(
        told.getMessage().contains("KubeVirt CR") && told.getMessage().contains("HTTP 429"),
        told.getMessage());
    Await.until(
        "the controller listed the KubeVirt CRs again, with backoff",
        WAIT,
        () -> proxy.refused(KUBEVIRT_LISTS) >= 3);
    assertEquals(0, proxy.passed(KUBEVIRT_LISTS), "every list so far was refused");
    assertFalse(deletedOrDeleting(world.infra(), NS, vm, uid), "not evacuated on a guess");
    assertEquals(
        Optional.empty(),
        event(world.infra(), NS, vm, "EvacuationLeftToKubeVirt"),
        "a failed list is not 'no strategy': not left to KubeVirt");
    assertEquals(
        Optional.empty(),
        annotation(get(world.infra(), NS, vm).orElseThrow(), EvictionAnnotations.DRAIN_START_TIME),
        "nothing written on a VMI that may not be ours");
    assertFalse(unschedulable(node(world.guest(), vm)), "the guest untouched");

    proxy.stopRefusing(KUBEVIRT_LISTS);

    awaitDeleted(world.infra(), NS, vm, uid);
    assertTrue(proxy.passed(KUBEVIRT_LISTS) >= 1, "deleted once a list answered");
    assertTrue(
        awaitEvent(world.infra(), NS, vm, "DrainSucceeded")
            .getMessage()
            .contains("; VMI deleted so that"));
    assertTrue(unschedulable(node(world.guest(), vm)), "guest node cordoned");
    assertTrue(
        podsOn(world.guest(), guestNs, vm).stream()
            .allMatch(p -> p.getMetadata().getDeletionTimestamp() != null),
        "no pod left running on the drained node");
    assertEquals(Optional.empty(), event(world.infra(), NS, vm, "EvacuationLeftToKubeVirt"));
  }

  @Test
  void aMachineThatCannotBeReadIsNotTakenForNoMachineItsDrainExclusionIsHonouredOnceRead()
      throws Exception {
    String vm = unique("vm-machine");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    EvictionFixture.machine(world.infra(), NS, TENANT, vm);
    world.infraKubectl(
        "-n",
        NS,
        "annotate",
        "machines.cluster.x-k8s.io",
        vm,
        "machine.cluster.x-k8s.io/exclude-node-draining=");
    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    evacuate(world.infra(), NS, vm, INFRA_NODE);

    CoreV1Event told = awaitEvent(world.infra(), NS, vm, "InfraAPIError");
    assertTrue(
        told.getMessage().contains("Machine " + NS + "/" + vm)
            && told.getMessage().contains("HTTP 429"),
        told.getMessage());
    Await.until(
        "the Machine read again, with backoff",
        WAIT,
        () -> proxy.refused(MACHINE_READS.and(line -> line.contains("/machines/" + vm))) >= 2);
    assertFalse(deletedOrDeleting(world.infra(), NS, vm, uid), "no deletion on a guess");
    assertFalse(
        unschedulable(node(world.guest(), vm)), "no drain on a guess: the Machine excludes it");
    assertEquals(Optional.empty(), event(world.infra(), NS, vm, "MachineContractUnavailable"));

    proxy.stopRefusing(MACHINE_READS);

    awaitDeleted(world.infra(), NS, vm, uid);
    awaitEvent(world.infra(), NS, vm, "NodeDrainExcluded");
    assertFalse(
        unschedulable(node(world.guest(), vm)), "never cordoned: the Machine excludes draining");
    assertEquals(Optional.empty(), event(world.infra(), NS, vm, "DrainSucceeded"));
  }
}
