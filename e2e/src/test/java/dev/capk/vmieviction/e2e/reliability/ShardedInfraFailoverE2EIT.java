package dev.capk.vmieviction.e2e.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Closing;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.ControllerServiceAccount;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.ExternalInfraWorld;
import dev.capk.vmieviction.e2e.scenario.InfraCredentials;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.ShardLeaseView;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --shard-infra-clusters}, end to end with the jar: two replicas (as the controller's
 * ServiceAccount with config/default's RBAC) share two infra clusters, one each, through the
 * Leases. Both infra clusters are drained with the real {@code kubectl drain}; once infra cluster
 * 1's first VMI is marked, the replica holding infra cluster 1 is SIGKILLed. The other takes infra
 * cluster 1's Lease only after it expired and finishes its evacuations with their original drain
 * start: both drains complete, every VMI deleted exactly once, no budget broken.
 */
class ShardedInfraFailoverE2EIT {
  @RegisterExtension
  static final LocalClusterExtension management =
      LocalClusterExtension.shared("ext-e2e-management", b -> b);

  @RegisterExtension
  static final LocalClusterExtension infra1 = LocalClusterExtension.shared("e2e-infra");

  @RegisterExtension
  static final LocalClusterExtension infra2 = LocalClusterExtension.shared("ext-e2e-infra-2");

  @RegisterExtension
  static final LocalClusterExtension guestA = LocalClusterExtension.shared("e2e-guest-a");

  @RegisterExtension
  static final LocalClusterExtension guestB = LocalClusterExtension.shared("e2e-guest-b");

  private static final String ID = "shard-e2e";
  private static final Duration LEASE_DURATION = Duration.ofSeconds(6);
  private static final List<ControllerProcess> replicas = new ArrayList<>();
  private static ExternalInfraWorld world;

  @AfterAll
  static void stop() {
    replicas.forEach(ControllerProcess::close);
    Closing.all(world);
    EvacuationWorld.stopStandIn(infra2.cluster());
  }

  @Test
  void aReplicaKilledMidDrainLosesItsInfraClusterToTheOtherWhichFinishesEveryEvacuation()
      throws Exception {
    world = ExternalInfraWorld.start(management.cluster());
    EvacuationWorld site1 = world.addInfraCluster(infra1.cluster(), "sh1", 2);
    EvacuationWorld site2 = world.addInfraCluster(infra2.cluster(), "sh2", 2);
    String credentials1 =
        InfraCredentials.grant(infra1.cluster(), "shard-controller-1", List.of("sh1-c"));
    String credentials2 =
        InfraCredentials.grant(infra2.cluster(), "shard-controller-2", List.of("sh2-d"));
    TenantCluster tenantC = world.addTenant(site1, "c", guestA.cluster(), credentials1);
    TenantCluster tenantD = world.addTenant(site2, "d", guestB.cluster(), credentials2);
    String node1 = site1.infraNodes().get(0);
    String node2 = site2.infraNodes().get(0);
    site1.addVmsOn(node1, tenantC, "External", "sh1-c-0", "sh1-c-1");
    site1.addVmsOn(site1.infraNodes().get(1), tenantC, "External", "sh1-c-anchor");
    site2.addVmsOn(node2, tenantD, "External", "sh2-d-0", "sh2-d-1");
    site2.addVmsOn(site2.infraNodes().get(1), tenantD, "External", "sh2-d-anchor");
    tenantC.deployProtectedWorkload("shop", "web", 6, 5);
    tenantD.deployProtectedWorkload("data", "db", 6, 5);
    tenantC.awaitAvailable("shop", "web", 6);
    tenantD.awaitAvailable("data", "db", 6);
    Map<String, String> uids1 = new LinkedHashMap<>();
    Map<String, String> uids2 = new LinkedHashMap<>();
    for (String v : List.of("sh1-c-0", "sh1-c-1")) uids1.put(v, site1.vmiUid(tenantC, v));
    for (String v : List.of("sh2-d-0", "sh2-d-1")) uids2.put(v, site2.vmiUid(tenantD, v));

    Path kubeconfig = ControllerServiceAccount.install(management.cluster());
    List<String> flags = ShardLeaseView.replicaFlags(kubeconfig, ID, LEASE_DURATION);
    for (String name : List.of("shard-1", "shard-2")) {
      replicas.add(ControllerProcess.start(name, management.cluster().dir(), flags));
    }
    String lease1 = ShardLeaseView.name(ID, credentials1);
    String lease2 = ShardLeaseView.name(ID, credentials2);
    // A replica logs its identity once started; read before that, it would be blank, and a
    // blank holder (a Lease not yet created) would then count as held.
    Await.until(
        "both replicas to log their identity",
        Duration.ofSeconds(60),
        () -> replicas.stream().noneMatch(r -> identity(r).isBlank()));
    Set<String> identities = Set.of(identity(replicas.get(0)), identity(replicas.get(1)));
    Await.until(
        "each infra cluster held by a different replica",
        Duration.ofSeconds(60),
        () ->
            identities.contains(holder(lease1))
                && identities.contains(holder(lease2))
                && !holder(lease1).equals(holder(lease2)));
    String doomedIdentity = holder(lease1);
    ControllerProcess doomed =
        replicas.stream().filter(r -> identity(r).equals(doomedIdentity)).findFirst().orElseThrow();
    ControllerProcess survivor = replicas.stream().filter(r -> r != doomed).findFirst().get();
    assertTrue(
        doomed.metrics().contains("vmi_eviction_infra_cluster_owned{infra_cluster=\""),
        "the holder's gauge names what it owns");

    try (InvariantRecorder recorder1 = new InvariantRecorder(infra1.cluster(), List.of(tenantC));
        InvariantRecorder recorder2 = new InvariantRecorder(infra2.cluster(), List.of(tenantD))) {
      recorder1.startTrackingAvailability();
      recorder2.startTrackingAvailability();
      CompletableFuture<Kubectl.Result> drain1 =
          CompletableFuture.supplyAsync(() -> site1.drainInfraNode(node1, Duration.ofMinutes(3)));
      CompletableFuture<Kubectl.Result> drain2 =
          CompletableFuture.supplyAsync(() -> site2.drainInfraNode(node2, Duration.ofMinutes(3)));
      Await.until(
          "the holder of infra cluster 1 to start an evacuation there",
          Duration.ofSeconds(60),
          () -> uids1.keySet().stream().anyMatch(v -> !drainStart(site1, tenantC, v).isBlank()));
      doomed.kill();
      String lastRenewal = ShardLeaseView.read(management.cluster(), lease1).renewTime();
      assertEquals(doomedIdentity, holder(lease1), "nobody took infra cluster 1 at once");

      Await.until(
          "the survivor to hold infra cluster 1",
          Duration.ofSeconds(60),
          () -> identity(survivor).equals(holder(lease1)));
      Duration gap =
          Duration.between(
              OffsetDateTime.parse(lastRenewal),
              OffsetDateTime.parse(
                  ShardLeaseView.read(management.cluster(), lease1).acquireTime()));
      System.out.printf(
          "sharded failover: infra cluster 1 taken %d ms after the killed replica's last renewal"
              + " (lease %ds, retry period 1s)%n",
          gap.toMillis(), LEASE_DURATION.toSeconds());
      assertTrue(
          gap.compareTo(LEASE_DURATION) >= 0,
          "taken " + gap + " after the last renewal, before the lease could expire");

      for (var drain : List.of(drain1, drain2)) {
        Kubectl.Result result = drain.get(4, TimeUnit.MINUTES);
        assertEquals(0, result.exitCode(), result.stderr() + result.stdout());
      }
      evacuatedOnce(recorder1, site1, tenantC, uids1);
      evacuatedOnce(recorder2, site2, tenantD, uids2);
      assertTrue(
          recorder1.minAvailable(tenantC, "shop", "web") >= 5,
          "budget broken: " + recorder1.minAvailableByWorkload());
      assertTrue(
          recorder2.minAvailable(tenantD, "data", "db") >= 5,
          "budget broken: " + recorder2.minAvailableByWorkload());
      assertNotEquals(doomedIdentity, holder(lease2), "infra cluster 2 was the survivor's");
    }
  }

  /** Each VMI drained first, deleted exactly once, recreated, with one drain start ever seen. */
  private static void evacuatedOnce(
      InvariantRecorder recorder,
      EvacuationWorld site,
      TenantCluster tenant,
      Map<String, String> uids) {
    for (var e : uids.entrySet()) {
      String uid = e.getValue();
      Await.until(
          e.getKey() + " deletion checked",
          Duration.ofSeconds(60),
          () -> recorder.drainCheck(uid) != null);
      assertTrue(recorder.drainCheck(uid).drained(), e.getKey() + ": " + recorder.drainCheck(uid));
      assertEquals(1, recorder.deletions(uid), e.getKey() + " deleted exactly once");
      assertEquals(
          1,
          recorder.drainStarts(tenant.namespace(), e.getKey()).size(),
          e.getKey()
              + " kept its original drain start: "
              + recorder.drainStarts(tenant.namespace(), e.getKey()));
      Await.until(
          e.getKey() + " recreated",
          Duration.ofSeconds(60),
          () -> {
            String now = site.vmiUid(tenant, e.getKey());
            return !now.isBlank() && !now.equals(uid);
          });
    }
  }

  private static String drainStart(EvacuationWorld site, TenantCluster tenant, String vmi) {
    return site.vmiField(
        tenant, vmi, ".metadata.annotations.capk\\.cluster\\.x-k8s\\.io/vmi-drain-start-time");
  }

  private static String holder(String lease) {
    return ShardLeaseView.read(management.cluster(), lease).holder();
  }

  private static String identity(ControllerProcess p) {
    return ShardLeaseView.identity(p);
  }
}
