package dev.capk.vmieviction.e2e.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.ProcessLogs;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two replicas with leader election: the leader is SIGKILLed mid-evacuation; the standby takes the
 * Lease only once it has expired (judged by the Lease's own timestamps) and finishes every
 * evacuation; no VMI is deleted twice.
 */
class LeaderFailoverE2EIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("e2e-infra");

  @RegisterExtension
  static final LocalClusterExtension guestB = LocalClusterExtension.shared("e2e-guest-b");

  private static final String LEASE = "ha-e2e";
  private static final Duration LEASE_DURATION = Duration.ofSeconds(15);
  private static final List<ControllerProcess> replicas = new ArrayList<>();
  private static EvacuationWorld world;

  @AfterAll
  static void stop() {
    replicas.forEach(ControllerProcess::close);
    if (world != null) world.close();
  }

  @Test
  void theStandbyTakesOverWhenTheLeaderDiesAndFinishesEveryEvacuation() throws Exception {
    world = EvacuationWorld.start(infra.cluster(), "ha", 3);
    TenantCluster tenant = world.addTenant("b", guestB.cluster());
    String from = world.infraNodes().get(0);
    world.addVmsOn(world.infraNodes().get(2), tenant, "External", "ha-b-anchor");
    world.addVmsOn(from, tenant, "External", "ha-b-0", "ha-b-1");
    tenant.deployProtectedWorkload("app", "web", 8, 7);
    tenant.awaitAvailable("app", "web", 8);
    Map<String, String> uids = new LinkedHashMap<>();
    for (String vmi : List.of("ha-b-0", "ha-b-1")) uids.put(vmi, world.vmiUid(tenant, vmi));

    List<String> flags =
        new ArrayList<>(
            List.of(
                "--kubeconfig=" + infra.cluster().kubeconfig(),
                "--drain-timeout=5m",
                "--leader-elect",
                "--leader-election-namespace=default",
                "--leader-election-id=" + LEASE,
                "--leader-election-lease-duration=" + LEASE_DURATION.toSeconds() + "s",
                // A standby notices an expired lease within about 2.2 retry periods (the elector's
                // jitter): 1 s keeps the takeover, and so the test, short.
                "--leader-election-retry-period=1s"));
    flags.addAll(world.controllerNamespaceFlags());
    for (String name : List.of("ha-1", "ha-2")) {
      replicas.add(ControllerProcess.start(name, infra.cluster().dir(), flags));
    }
    Await.until("a leader", Duration.ofSeconds(60), () -> !holder().isBlank());
    String leaderIdentity = holder();
    ControllerProcess leader =
        replicas.stream().filter(r -> identity(r).equals(leaderIdentity)).findFirst().orElseThrow();
    ControllerProcess standby =
        replicas.stream().filter(r -> r != leader).findFirst().orElseThrow();

    try (InvariantRecorder recorder = new InvariantRecorder(infra.cluster(), List.of(tenant))) {
      recorder.startTrackingAvailability();
      CompletableFuture<Kubectl.Result> drain =
          CompletableFuture.supplyAsync(() -> world.drainInfraNode(from, Duration.ofMinutes(3)));
      Await.until(
          "the leader to start an evacuation",
          Duration.ofSeconds(60),
          () ->
              uids.keySet().stream()
                  .anyMatch(
                      v ->
                          !world
                              .vmiField(
                                  tenant,
                                  v,
                                  ".metadata.annotations.capk\\.cluster\\.x-k8s\\.io/vmi-drain-start-time")
                              .isBlank()));
      leader.kill();
      // Read after the kill: the dead leader's last renewal, before anyone else holds the lease.
      String lastRenewByLeader = renewTime();
      assertEquals(leaderIdentity, holder(), "nobody took the lease within a moment of the kill");

      Await.until(
          "the standby to hold the lease",
          Duration.ofSeconds(60),
          () -> identity(standby).equals(holder()));
      OffsetDateTime renewed = OffsetDateTime.parse(lastRenewByLeader);
      OffsetDateTime acquired = OffsetDateTime.parse(acquireTime());
      Duration gap = Duration.between(renewed, acquired);
      System.out.printf(
          "leader failover: lease taken %d ms after the dead leader's last renewal (lease %ds)%n",
          gap.toMillis(), LEASE_DURATION.toSeconds());
      // Never a live lease: the standby waits for the dead leader's lease to expire.
      assertTrue(
          gap.compareTo(LEASE_DURATION) >= 0,
          "the standby took the lease "
              + gap
              + " after the last renewal, lease duration "
              + LEASE_DURATION);

      Kubectl.Result result = drain.get();
      assertEquals(0, result.exitCode(), result.stderr());
      for (var e : uids.entrySet()) {
        String uid = e.getValue();
        Await.until(
            e.getKey() + " deletion checked",
            Duration.ofSeconds(60),
            () -> recorder.drainCheck(uid) != null);
        assertTrue(
            recorder.drainCheck(uid).drained(), e.getKey() + ": " + recorder.drainCheck(uid));
        Await.until(
            e.getKey() + " recreated",
            Duration.ofSeconds(60),
            () -> {
              String now = world.vmiUid(tenant, e.getKey());
              return !now.isBlank() && !now.equals(uid);
            });
        assertEquals(1, recorder.deletions(uid), e.getKey() + " deleted exactly once");
        assertEquals(
            0,
            recorder.deletions(world.vmiUid(tenant, e.getKey())),
            "successor of " + e.getKey() + " deleted");
      }
      assertTrue(
          recorder.minAvailable(tenant, "app", "web") >= 7,
          "budget violated: " + recorder.minAvailableByWorkload());
      assertNotEquals(leaderIdentity, holder());
    }
  }

  private static String lease(String jsonPath) {
    return infra
        .cluster()
        .kubectl()
        .run(
            null,
            Duration.ofSeconds(10),
            "-n",
            "default",
            "get",
            "lease",
            LEASE,
            "-o",
            "jsonpath={" + jsonPath + "}")
        .stdout()
        .strip();
  }

  private static String holder() {
    return lease(".spec.holderIdentity");
  }

  private static String renewTime() {
    return lease(".spec.renewTime");
  }

  private static String acquireTime() {
    return lease(".spec.acquireTime");
  }

  /** The identity a replica logs when it joins the election. */
  private static String identity(ControllerProcess p) {
    Matcher m =
        Pattern.compile("leader election enabled .*identity=(\\S+)")
            .matcher(ProcessLogs.tail(p.log(), 500));
    return m.find() ? m.group(1) : "";
  }
}
