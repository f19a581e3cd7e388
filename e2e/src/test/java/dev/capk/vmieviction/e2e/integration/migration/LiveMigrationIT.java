package dev.capk.vmieviction.e2e.integration.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.scenario.CordonedNodes;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Live migration first, against real control planes: the controller in-process with {@code
 * --live-migration=prefer}, the KubeVirt stand-in carrying out the VirtualMachineInstanceMigrations
 * it creates, and the real kubectl drain of four infra nodes at once. One run, several VMIs, each
 * with its own story (the stand-in's failure and duration are injected per VMI):
 *
 * <ul>
 *   <li>{@code lm-mig-0}, {@code lm-mig-1}: live-migratable, migrate; {@code lm-mig-2}: not,
 *       drained and deleted;
 *   <li>{@code lm-fail-0}: every migration fails; after two attempts, the drain;
 *   <li>{@code lm-hang-0}: the migration never finishes; cancelled at deadline minus reserve;
 *   <li>{@code lm-restart-0}: the controller restarts while it migrates;
 *   <li>{@code lm-never-0}: live-migratable, but its Cluster says {@code never}.
 * </ul>
 *
 * Drain timeout 40 s, reserve 20 s. Guest nodes cordoned are recorded from a watch.
 */
class LiveMigrationIT {

  @RegisterExtension
  static final LocalClusterExtension infraExt = LocalClusterExtension.shared("mig-infra");

  @RegisterExtension
  static final LocalClusterExtension guestExt = LocalClusterExtension.shared("mig-guest");

  static final String RESULT = "standin.kubevirt.io/migration-result";
  static final String DURATION = "standin.kubevirt.io/migration-duration";

  static EvacuationWorld world;
  static Manager manager;
  static TenantCluster prefer;
  static TenantCluster never;
  static final Map<String, String> uidBefore = new HashMap<>();
  static final Map<String, String> guestPodUidBefore = new HashMap<>();
  static final Set<String> everCordoned = ConcurrentHashMap.newKeySet();
  static boolean restartedWhileMigrating;
  static boolean infraDrainsCompleted;

  @BeforeAll
  static void evacuate() throws Exception {
    LocalCluster infra = infraExt.cluster();
    LocalCluster guest = guestExt.cluster();
    world = EvacuationWorld.start(infra, "lm", 5);
    List<String> nodes = world.infraNodes();
    prefer = world.addTenant("p", guest);
    never = world.addTenant("n", guest);
    world.addVmsOn(nodes.get(0), prefer, "External", "lm-mig-0", "lm-mig-1", "lm-mig-2");
    world.addVmsOn(nodes.get(1), prefer, "External", "lm-fail-0");
    world.addVmsOn(nodes.get(2), prefer, "External", "lm-hang-0");
    world.addVmsOn(nodes.get(3), prefer, "External", "lm-restart-0");
    world.addVmsOn(nodes.get(3), never, "External", "lm-never-0");
    annotateCluster(never, "capk.cluster.x-k8s.io/live-migration=never");
    for (String vm :
        List.of("lm-mig-0", "lm-mig-1", "lm-fail-0", "lm-hang-0", "lm-restart-0", "lm-never-0")) {
      liveMigratable(vm.equals("lm-never-0") ? never : prefer, vm);
    }
    annotateVmi(prefer, "lm-fail-0", RESULT + "=fail");
    annotateVmi(prefer, "lm-hang-0", DURATION + "=hang");
    annotateVmi(prefer, "lm-restart-0", DURATION + "=6");
    for (String vm : List.of("lm-mig-0", "lm-mig-1", "lm-mig-2", "lm-fail-0", "lm-hang-0")) {
      uidBefore.put(vm, world.vmiUid(prefer, vm));
    }
    uidBefore.put("lm-restart-0", world.vmiUid(prefer, "lm-restart-0"));
    uidBefore.put("lm-never-0", world.vmiUid(never, "lm-never-0"));
    for (String vm : List.of("lm-mig-0", "lm-mig-1")) {
      guestPodUidBefore.put(vm, pinGuestPod(guest, vm));
    }

    SharedInformerFactory guestWatch = watchGuestNodes(guest);
    manager = startController();
    try {
      List<CompletableFuture<Boolean>> drains = new ArrayList<>();
      for (String node : nodes.subList(0, 4)) {
        drains.add(
            CompletableFuture.supplyAsync(
                () -> world.drainInfraNode(node, Duration.ofSeconds(90)).exitCode() == 0));
      }
      // Restart the controller while lm-restart-0's migration runs (not waited for in vain when
      // no migration comes: the tests below then say what is missing).
      long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (System.nanoTime() < giveUp
          && !migrationsOf(prefer, "lm-restart-0").contains("Running")) {
        Thread.sleep(200);
      }
      restartedWhileMigrating = migrationsOf(prefer, "lm-restart-0").contains("Running");
      manager.close();
      manager = startController();
      boolean all = true;
      for (CompletableFuture<Boolean> d : drains) {
        all &= d.get();
      }
      infraDrainsCompleted = all;
      // The recreated VMIs run again.
      for (String vm : List.of("lm-mig-2", "lm-fail-0", "lm-hang-0")) {
        awaitRecreated(prefer, vm);
      }
      awaitRecreated(never, "lm-never-0");
    } finally {
      guestWatch.stopAllRegisteredInformers();
      for (String node : nodes.subList(0, 4)) {
        world.infra().kubectl().run(null, Duration.ofSeconds(30), "uncordon", node);
      }
    }
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
  void liveMigratableVmisMigrateWithoutTouchingTheirGuest() throws Exception {
    assertTrue(infraDrainsCompleted, "every kubectl drain completed");
    for (String vm : List.of("lm-mig-0", "lm-mig-1")) {
      assertEquals(uidBefore.get(vm), world.vmiUid(prefer, vm), vm + " kept its UID: not deleted");
      assertNotEquals(
          world.infraNodes().get(0), world.vmiField(prefer, vm, ".status.nodeName"), vm + " moved");
      assertEquals(List.of("Succeeded"), migrationsOf(prefer, vm), vm);
      assertFalse(everCordoned.contains(vm), vm + "'s guest node was cordoned: " + everCordoned);
      V1Pod pod = guestPod(vm);
      assertEquals(guestPodUidBefore.get(vm), pod.getMetadata().getUid(), "guest pod on " + vm);
      assertEquals(null, pod.getMetadata().getDeletionTimestamp(), "guest pod on " + vm);
      assertTrue(reasons(prefer, vm).contains("MigrationSucceeded"), eventsOf(prefer, vm));
    }
  }

  @Test
  void aVmiThatIsNotLiveMigratableIsDrainedAndDeleted() throws Exception {
    List<String> reasons = reasons(prefer, "lm-mig-2");
    assertTrue(reasons.contains("FallingBackToDrain"), eventsOf(prefer, "lm-mig-2"));
    // Drained, then deleted: one DrainSucceeded event tells both.
    assertTrue(reasons.contains("DrainSucceeded"), eventsOf(prefer, "lm-mig-2"));
    assertEquals(List.of(), migrationsOf(prefer, "lm-mig-2"));
    assertTrue(everCordoned.contains("lm-mig-2"), "its guest node was drained");
  }

  @Test
  void aMigrationThatFailsTwiceFallsBackToTheDrainBeforeTheDeadline() throws Exception {
    assertEquals(List.of("Failed", "Failed"), migrationsOf(prefer, "lm-fail-0"));
    List<String> reasons = reasons(prefer, "lm-fail-0");
    assertTrue(reasons.contains("FallingBackToDrain"), eventsOf(prefer, "lm-fail-0"));
    assertTrue(reasons.contains("MigrationFailed"), eventsOf(prefer, "lm-fail-0"));
    assertTrue(reasons.contains("DrainSucceeded"), eventsOf(prefer, "lm-fail-0"));
    assertFalse(reasons.contains("DrainDeadlinePassed"), eventsOf(prefer, "lm-fail-0"));
  }

  @Test
  void aHangingMigrationIsCancelledAtDeadlineMinusReserveThenDrainedAndDeleted() throws Exception {
    assertEquals(List.of(), migrationsOf(prefer, "lm-hang-0"), "the migration was deleted");
    String events = eventsOf(prefer, "lm-hang-0");
    assertTrue(
        events.contains(
            "FallingBackToDrain: Not live-migrated: live migration attempt 1 not finished by the deadline minus the reserve"),
        events);
    assertTrue(reasons(prefer, "lm-hang-0").contains("DrainSucceeded"), events);
  }

  @Test
  void aControllerRestartMidMigrationCreatesNoSecondMigration() throws Exception {
    assertTrue(restartedWhileMigrating);
    assertEquals(List.of("Succeeded"), migrationsOf(prefer, "lm-restart-0"));
    assertEquals(uidBefore.get("lm-restart-0"), world.vmiUid(prefer, "lm-restart-0"));
    assertFalse(everCordoned.contains("lm-restart-0"), everCordoned.toString());
  }

  @Test
  void theClustersNeverPolicyKeepsTodaysDrain() throws Exception {
    assertEquals(List.of(), migrationsOf(never, "lm-never-0"));
    List<String> reasons = reasons(never, "lm-never-0");
    assertTrue(reasons.contains("DrainSucceeded"), eventsOf(never, "lm-never-0"));
    assertFalse(reasons.contains("FallingBackToDrain"), eventsOf(never, "lm-never-0"));
    assertTrue(everCordoned.contains("lm-never-0"));
  }

  private static Manager startController() throws Exception {
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--kubeconfig",
                infraExt.cluster().kubeconfig().toString(),
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "127.0.0.1:0",
                "--drain-timeout",
                "40s",
                "--drain-retry-interval",
                "1s",
                "--drain-attempt-timeout",
                "3s",
                "--drain-reserve",
                "20s",
                "--live-migration",
                "prefer"));
    flags.addAll(world.controllerNamespaceFlags());
    Manager m = Main.start(flags.toArray(String[]::new));
    Await.until("controller ready", Duration.ofSeconds(90), m::ready);
    return m;
  }

  private static void annotateCluster(TenantCluster tenant, String annotation) {
    world
        .infra()
        .kubectl()
        .runOrFail(
            null,
            "-n",
            tenant.namespace(),
            "annotate",
            "clusters.cluster.x-k8s.io",
            tenant.name(),
            annotation);
  }

  private static void annotateVmi(TenantCluster tenant, String vm, String annotation) {
    world
        .infra()
        .kubectl()
        .runOrFail(null, "-n", tenant.namespace(), "annotate", "vmi", vm, annotation);
  }

  /** KubeVirt's LiveMigratable condition, as virt-controller sets it on a migratable VMI. */
  private static void liveMigratable(TenantCluster tenant, String vm) {
    world
        .infra()
        .kubectl()
        .runOrFail(
            null,
            "-n",
            tenant.namespace(),
            "patch",
            "vmi",
            vm,
            "--subresource=status",
            "--type=merge",
            "-p",
            "{\"status\":{\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":\"True\"}]}}");
  }

  /** A pod on the guest node of {@code vm}; returns its UID. */
  private static String pinGuestPod(LocalCluster guest, String vm) throws Exception {
    guest
        .kubectl()
        .apply(
            """
            apiVersion: v1
            kind: Namespace
            metadata: {name: lm-work}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {name: %1$s-work, namespace: lm-work}
            spec:
              nodeName: %1$s
              terminationGracePeriodSeconds: 1
              containers: [{name: main, image: work:fake}]
            """
                .formatted(vm));
    return guestPod(vm).getMetadata().getUid();
  }

  private static V1Pod guestPod(String vm) throws Exception {
    return new CoreV1Api(guestExt.cluster().client())
        .readNamespacedPod(vm + "-work", "lm-work")
        .execute();
  }

  private static SharedInformerFactory watchGuestNodes(LocalCluster guest) {
    return CordonedNodes.watch(guest, everCordoned);
  }

  private static void awaitRecreated(TenantCluster tenant, String vm) {
    Await.until(
        vm + " recreated and Running",
        Duration.ofSeconds(90),
        () -> {
          String uid = world.vmiUid(tenant, vm);
          return !uid.isBlank()
              && !uid.equals(uidBefore.get(vm))
              && "Running".equals(world.vmiField(tenant, vm, ".status.phase"));
        });
  }

  /** The phases of the migrations of {@code vm}, oldest first. */
  private static List<String> migrationsOf(TenantCluster tenant, String vm) {
    String json =
        world
            .infra()
            .kubectl()
            .run(
                null,
                Duration.ofSeconds(10),
                "-n",
                tenant.namespace(),
                "get",
                "virtualmachineinstancemigrations.kubevirt.io",
                "-o",
                "json")
            .stdout();
    List<JsonObject> items = new ArrayList<>();
    for (JsonElement e : JsonParser.parseString(json).getAsJsonObject().getAsJsonArray("items")) {
      JsonObject m = e.getAsJsonObject();
      if (vm.equals(m.getAsJsonObject("spec").get("vmiName").getAsString())) {
        items.add(m);
      }
    }
    items.sort(
        (a, b) ->
            a.getAsJsonObject("metadata")
                .get("name")
                .getAsString()
                .compareTo(b.getAsJsonObject("metadata").get("name").getAsString()));
    return items.stream()
        .map(
            m ->
                m.has("status") && m.getAsJsonObject("status").has("phase")
                    ? m.getAsJsonObject("status").get("phase").getAsString()
                    : "")
        .collect(Collectors.toList());
  }

  private static List<CoreV1Event> events(TenantCluster tenant, String vm) throws Exception {
    return new CoreV1Api(infraExt.cluster().client())
        .listNamespacedEvent(tenant.namespace()).execute().getItems().stream()
            .filter(e -> vm.equals(e.getInvolvedObject().getName()))
            .filter(e -> "VirtualMachineInstance".equals(e.getInvolvedObject().getKind()))
            .toList();
  }

  private static List<String> reasons(TenantCluster tenant, String vm) throws Exception {
    return events(tenant, vm).stream().map(CoreV1Event::getReason).toList();
  }

  private static String eventsOf(TenantCluster tenant, String vm) throws Exception {
    return events(tenant, vm).stream()
        .map(e -> e.getReason() + ": " + e.getMessage())
        .collect(Collectors.joining("\n"));
  }
}
