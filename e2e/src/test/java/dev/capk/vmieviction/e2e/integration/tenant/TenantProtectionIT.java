package dev.capk.vmieviction.e2e.integration.tenant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.HeldUntilDeadline;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import dev.capk.vmieviction.e2e.scenario.TenantEvents;
import dev.capk.vmieviction.eviction.InfraVmis;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeCondition;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The admit step against real control planes, with the controller in-process and the KubeVirt
 * stand-in (real kubectl drain of an infra node, VMIs recreated): the per-cluster limit, the
 * Cluster's annotation overriding it, the control-plane quorum guard, and the reserve that lets a
 * held control-plane VMI go ahead before its deadline. What was draining when is recorded from
 * watches of the infra VMIs and the guest nodes. Clusters of its own: nothing another class left on
 * a shared infra cluster (launcher pods, webhooks) takes part in its drains.
 */
class TenantProtectionIT {

  @RegisterExtension
  static final LocalClusterExtension infraExt = LocalClusterExtension.shared("tenant-infra");

  @RegisterExtension
  static final LocalClusterExtension guestExt = LocalClusterExtension.shared("tenant-guest");

  static final Duration DRAIN = Duration.ofMinutes(3);

  static EvacuationWorld world;
  static Manager manager;
  static TenantCluster limited;
  static TenantCluster annotated;
  static TenantCluster controlPlane;
  static TenantCluster reserve;

  @BeforeAll
  static void start() throws Exception {
    LocalCluster infra = infraExt.cluster();
    LocalCluster guest = guestExt.cluster();
    world = EvacuationWorld.start(infra, "tp", 5);
    List<String> nodes = world.infraNodes();
    limited = world.addTenant("lim", guest);
    annotated = world.addTenant("ann", guest);
    controlPlane = world.addTenant("cp", guest);
    reserve = world.addTenant("res", guest);
    world.addVmsOn(
        nodes.get(0),
        limited,
        "External",
        "tp-lim-0",
        "tp-lim-1",
        "tp-lim-2",
        "tp-lim-3",
        "tp-lim-4",
        "tp-lim-5");
    world.addVmsOn(nodes.get(1), annotated, "External", "tp-ann-0", "tp-ann-1", "tp-ann-2");
    infra
        .kubectl()
        .runOrFail(
            null,
            "-n",
            annotated.namespace(),
            "annotate",
            "clusters.cluster.x-k8s.io",
            annotated.name(),
            "capk.cluster.x-k8s.io/max-concurrent-evacuations=1");
    world.addVmsOn(nodes.get(2), controlPlane, "External", true, "tp-cp-0", "tp-cp-1", "tp-cp-2");
    world.addVmsOn(nodes.get(3), reserve, "External", true, "tp-res-0", "tp-res-1");
    for (String vm : List.of("tp-res-0", "tp-res-1")) {
      // A 30s drain timeout for these machines only (Cluster API's contract), and a guest pod its
      // budget does not let the drain evict: each stays admitted until its deadline.
      HeldUntilDeadline.machineDrainTimeout(infra, reserve.namespace(), vm, Duration.ofSeconds(30));
      HeldUntilDeadline.unevictablePod(guest, "tp-block", vm);
    }
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--kubeconfig",
                infra.kubeconfig().toString(),
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "127.0.0.1:0",
                "--drain-timeout",
                "5m",
                "--drain-retry-interval",
                "1s",
                "--drain-attempt-timeout",
                "3s",
                "--max-concurrent-evacuations-per-cluster",
                "2",
                "--drain-reserve",
                "20s"));
    flags.addAll(world.controllerNamespaceFlags());
    manager = Main.start(flags.toArray(String[]::new));
    Await.until("controller ready", Duration.ofSeconds(90), manager::ready);
  }

  @AfterAll
  static void stop() {
    if (manager != null) {
      manager.close();
    }
    if (world != null) {
      world.close();
    }
  }

  @Test
  void perClusterLimitKeepsAtMostTwoWorkerVmisDrainingAtOnce() throws Exception {
    try (Draining draining = new Draining(limited)) {
      drainAndAwaitRecreated(world.infraNodes().get(0), limited, draining);
      assertEquals(2, draining.maxDraining(), draining.history());
    }
  }

  @Test
  void clusterAnnotationOverridesTheFlagsLimit() throws Exception {
    try (Draining draining = new Draining(annotated)) {
      drainAndAwaitRecreated(world.infraNodes().get(1), annotated, draining);
      assertEquals(1, draining.maxDraining(), draining.history());
    }
  }

  @Test
  void controlPlaneVmisOfOneTenantAreEvacuatedOneAfterAnother() throws Exception {
    try (Draining draining = new Draining(controlPlane)) {
      drainAndAwaitRecreated(world.infraNodes().get(2), controlPlane, draining);
      assertEquals(1, draining.maxControlPlaneDown(), draining.history());
      assertEquals(1, draining.maxDraining(), draining.history());
      assertTrue(
          events(controlPlane).stream().anyMatch(e -> "EvacuationHeld".equals(e.getReason())),
          "a held control-plane VMI is told what it waits for");
    }
  }

  @Test
  void heldControlPlaneVmiGoesAheadAtDeadlineMinusReserve() throws Exception {
    try (Draining draining = new Draining(reserve)) {
      drainAndAwaitRecreated(world.infraNodes().get(3), reserve, draining);
      List<CoreV1Event> events = events(reserve);
      List<CoreV1Event> overrides =
          events.stream().filter(e -> "QuorumGuardOverridden".equals(e.getReason())).toList();
      assertEquals(1, overrides.size(), describe(events));
      CoreV1Event override = overrides.get(0);
      String held = override.getInvolvedObject().getName();
      String first = held.equals("tp-res-0") ? "tp-res-1" : "tp-res-0";
      Instant overriddenAt = when(override);
      Instant heldSince =
          events.stream()
              .filter(e -> "EvacuationHeld".equals(e.getReason()))
              .filter(e -> held.equals(e.getInvolvedObject().getName()))
              .map(TenantProtectionIT::firstTime)
              .min(Comparator.naturalOrder())
              .orElseThrow(() -> new AssertionError("no EvacuationHeld: " + describe(events)));
      assertFalse(heldSince.isAfter(overriddenAt), describe(events));
      // The figure: at deadline (start + the machine's 30s) minus the 20s reserve, ±2s
      // (and a second more: events and the drain start annotation keep whole seconds).
      Instant goAhead = draining.drainStartOf(held).plusSeconds(30 - 20);
      assertFalse(
          overriddenAt.isBefore(goAhead.minusSeconds(2)),
          "override at " + overriddenAt + ", deadline minus reserve " + goAhead);
      assertFalse(
          overriddenAt.isAfter(goAhead.plusSeconds(3)),
          "override at " + overriddenAt + ", deadline minus reserve " + goAhead);
      // What was risked: the first control-plane VMI was still being evacuated.
      Instant firstDeleted =
          events.stream()
              // Deleted drained (DrainSucceeded tells it) or at its deadline (VMIDeleted).
              .filter(e -> Set.of("VMIDeleted", "DrainSucceeded").contains(e.getReason()))
              .filter(e -> first.equals(e.getInvolvedObject().getName()))
              .map(TenantProtectionIT::firstTime)
              .min(Comparator.naturalOrder())
              .orElseThrow();
      assertFalse(firstDeleted.isBefore(overriddenAt), describe(events));
      assertTrue(override.getMessage().contains("still being evacuated"), override.getMessage());
    }
  }

  /** Drains the infra node with the real kubectl; waits until every VMI runs again elsewhere. */
  private static void drainAndAwaitRecreated(
      String infraNode, TenantCluster tenant, Draining draining) throws Exception {
    Map<String, String> before = new HashMap<>();
    for (String vm : tenant.vms()) {
      before.put(vm, world.vmiUid(tenant, vm));
    }
    CompletableFuture<Boolean> drained =
        CompletableFuture.supplyAsync(
            () -> world.drainInfraNode(infraNode, Duration.ofMinutes(3)).exitCode() == 0);
    try {
      for (String vm : tenant.vms()) {
        Await.until(
            vm + " recreated and Running",
            DRAIN,
            () -> {
              String uid = world.vmiUid(tenant, vm);
              return !uid.isBlank()
                  && !uid.equals(before.get(vm))
                  && "Running".equals(world.vmiField(tenant, vm, ".status.phase"));
            });
      }
      assertTrue(drained.get(), "kubectl drain completed");
    } finally {
      world.infra().kubectl().run(null, Duration.ofSeconds(30), "uncordon", infraNode);
    }
    assertTrue(draining.recorded(), "the watches saw the evacuations");
  }

  private static List<CoreV1Event> events(TenantCluster tenant) throws Exception {
    return TenantEvents.of(infraExt.cluster(), tenant);
  }

  private static Instant firstTime(CoreV1Event e) {
    return TenantEvents.firstTime(e);
  }

  private static Instant when(CoreV1Event e) {
    return firstTime(e);
  }

  private static String describe(List<CoreV1Event> events) {
    return events.stream()
        .sorted(Comparator.comparing(TenantProtectionIT::firstTime))
        .map(
            e ->
                firstTime(e)
                    + " "
                    + e.getInvolvedObject().getName()
                    + " "
                    + e.getReason()
                    + ": "
                    + e.getMessage())
        .collect(Collectors.joining("\n"));
  }

  /**
   * From watches of the tenant's infra VMIs and guest nodes: a VMI is draining while it (the same
   * object, not its recreation) has a drain start and its guest node is cordoned; a control-plane
   * guest node is down while cordoned or not Ready.
   */
  static final class Draining implements AutoCloseable {
    private final TenantCluster tenant;
    private final SharedInformerFactory infraFactory;
    private final SharedInformerFactory guestFactory;
    private final SharedIndexInformer<VirtualMachineInstance> vmis;
    private final SharedIndexInformer<V1Node> nodes;
    private final Map<String, Instant> drainStarts = new HashMap<>();
    private final List<String> history = new ArrayList<>();
    private int maxDraining;
    private int maxControlPlaneDown;
    private boolean sawDraining;

    Draining(TenantCluster tenant) {
      this.tenant = tenant;
      LocalCluster infra = infraExt.cluster();
      LocalCluster guest = guestExt.cluster();
      ApiClient infraWatch = infra.informerClient();
      ApiClient guestWatch = guest.informerClient();
      infraFactory = new SharedInformerFactory(infraWatch);
      vmis =
          infraFactory.sharedIndexInformerFor(
              InfraVmis.api(infraWatch), VirtualMachineInstance.class, 0, tenant.namespace());
      guestFactory = new SharedInformerFactory(guestWatch);
      nodes =
          guestFactory.sharedIndexInformerFor(
              new GenericKubernetesApi<>(
                  V1Node.class, V1NodeList.class, "", "v1", "nodes", guestWatch),
              V1Node.class,
              0);
      vmis.addEventHandler(handler());
      nodes.addEventHandler(handler());
      infraFactory.startAllRegisteredInformers();
      guestFactory.startAllRegisteredInformers();
      Await.until(
          "watches synced", Duration.ofSeconds(30), () -> vmis.hasSynced() && nodes.hasSynced());
    }

    private <T extends io.kubernetes.client.common.KubernetesObject>
        ResourceEventHandler<T> handler() {
      return new ResourceEventHandler<>() {
        @Override
        public void onAdd(T obj) {
          observe();
        }

        @Override
        public void onUpdate(T oldObj, T newObj) {
          observe();
        }

        @Override
        public void onDelete(T obj, boolean finalStateUnknown) {
          observe();
        }
      };
    }

    private synchronized void observe() {
      Map<String, V1Node> byName = new HashMap<>();
      for (V1Node n : nodes.getIndexer().list()) {
        byName.put(n.getMetadata().getName(), n);
      }
      Set<String> draining = new TreeSet<>();
      for (VirtualMachineInstance v : vmis.getIndexer().list()) {
        String name = v.getMetadata().getName();
        Map<String, String> a = v.getMetadata().getAnnotations();
        String start = a == null ? null : a.get(EvictionAnnotations.DRAIN_START_TIME);
        if (start == null) {
          continue;
        }
        drainStarts.putIfAbsent(name, OffsetDateTime.parse(start).toInstant());
        V1Node node = byName.get(name);
        if (node != null && cordoned(node)) {
          draining.add(name);
        }
      }
      Set<String> cpDown = new TreeSet<>();
      for (String vm : tenant.vms()) {
        V1Node node = byName.get(vm);
        if (node != null
            && node.getMetadata().getLabels() != null
            && node.getMetadata().getLabels().containsKey("node-role.kubernetes.io/control-plane")
            && (cordoned(node) || !ready(node))) {
          cpDown.add(vm);
        }
      }
      if (!draining.isEmpty()) {
        sawDraining = true;
      }
      String line = Instant.now() + " draining=" + draining + " controlPlaneDown=" + cpDown;
      if (history.isEmpty()
          || !history.get(history.size() - 1).endsWith(line.substring(line.indexOf(' ')))) {
        history.add(line);
      }
      maxDraining = Math.max(maxDraining, draining.size());
      maxControlPlaneDown = Math.max(maxControlPlaneDown, cpDown.size());
    }

    private static boolean cordoned(V1Node n) {
      return n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
    }

    private static boolean ready(V1Node n) {
      if (n.getStatus() == null || n.getStatus().getConditions() == null) {
        return false;
      }
      for (V1NodeCondition c : n.getStatus().getConditions()) {
        if ("Ready".equals(c.getType())) {
          return "True".equals(c.getStatus());
        }
      }
      return false;
    }

    synchronized int maxDraining() {
      return maxDraining;
    }

    synchronized int maxControlPlaneDown() {
      return maxControlPlaneDown;
    }

    synchronized boolean recorded() {
      return sawDraining;
    }

    synchronized Instant drainStartOf(String vmi) {
      return drainStarts.get(vmi);
    }

    synchronized String history() {
      return String.join("\n", history);
    }

    @Override
    public void close() {
      infraFactory.stopAllRegisteredInformers();
      guestFactory.stopAllRegisteredInformers();
    }
  }
}
