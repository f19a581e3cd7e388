package dev.capk.vmieviction.e2e.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Closing;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.ProcessLogs;
import dev.capk.vmieviction.e2e.harness.StallingProxy;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Issue 7, item 3: a tenant's guest API server dead (process stopped) and another's stalled (a
 * loopback proxy that accepts connections and never answers), side by side (each outage on its own
 * infra nodes and tenant, so their deadlines are waited out together). In both, while the infra
 * node is drained: the controller's circuit breaker for that tenant opens (its metric and log say
 * so), the tenant's VMIs are deleted within deadline + 30 s, and another tenant evacuated at the
 * same time does not wait for it: its evacuation completes while the outage tenant's VMIs still
 * wait for their deadline.
 */
class GuestOutageE2EIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("e2e-infra");

  @RegisterExtension
  static final LocalClusterExtension guestA = LocalClusterExtension.shared("e2e-guest-a");

  @RegisterExtension
  static final LocalClusterExtension guestB = LocalClusterExtension.shared("e2e-guest-b");

  /**
   * Its API server is stopped: shared with nobody. Only nodes are needed there, so only kwok runs
   * besides the API.
   */
  @RegisterExtension
  static final LocalClusterExtension deadGuest =
      LocalClusterExtension.shared("outage-dead-guest", LocalCluster.Builder::withKwok);

  /**
   * Each outage waits this out once. It must hold the healthy tenant's drain (a few seconds) and,
   * in the stall, the five failed calls that open the circuit (each bounded by the guest call
   * timeout, 8 s, three VMIs at once: some 16 s) with a wide margin under load.
   */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(30);

  /** The bound issue 7 sets: an outage may delay the deletion past the deadline by at most this. */
  static final Duration DEADLINE_SLACK = Duration.ofSeconds(30);

  private static EvacuationWorld world;
  private static TenantCluster dead;
  private static TenantCluster stalled;
  private static TenantCluster healthy;
  private static ControllerProcess controller;
  private static StallingProxy proxy;

  /**
   * n0: dead tenant; n1: healthy during the death; n2: stalled tenant; n3: healthy during the
   * stall; n4: a third healthy guest node, never drained; n5: where VMIs go.
   */
  private static List<String> nodes;

  @BeforeAll
  static void world() {
    world = EvacuationWorld.start(infra.cluster(), "outage", 6);
    nodes = world.infraNodes();
    dead = world.addTenant("dead", deadGuest.cluster());
    stalled = world.addTenant("stall", guestA.cluster());
    healthy = world.addTenant("ok", guestB.cluster());
    world.addVmsOn(nodes.get(0), dead, "External", "outage-dead-0", "outage-dead-1");
    world.addVmsOn(
        nodes.get(2), stalled, "External", "outage-stall-0", "outage-stall-1", "outage-stall-2");
    world.addVmsOn(nodes.get(1), healthy, "External", "outage-ok-1");
    world.addVmsOn(nodes.get(3), healthy, "External", "outage-ok-3");
    world.addVmsOn(nodes.get(4), healthy, "External", "outage-ok-4");
    // Every evacuated VMI is recreated on n5, so that no drain below finds another tenant's VMI.
    for (int i = 0; i < 5; i++) {
      infra.cluster().kubectl().runOrFail(null, "cordon", nodes.get(i));
    }
    // One pod per healthy guest node, a budget allowing one disruption: each drain evicts one pod.
    healthy.deployProtectedWorkload("app", "web", 3, 2);
    healthy.awaitAvailable("app", "web", 3);
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--kubeconfig=" + infra.cluster().kubeconfig(),
                "--drain-timeout=" + DRAIN_TIMEOUT.toSeconds() + "s",
                "--drain-retry-interval=2s",
                "--workers=4"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("outage", infra.cluster().dir(), flags);
  }

  @AfterAll
  static void stop() {
    Closing.all(controller, proxy);
    deadGuest.cluster().startApiServer();
    if (world != null) world.close();
    EvacuationWorld.stopStandIn(infra.cluster());
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void deadGuestApiServerOpensTheCircuitTheVmisGoByTheDeadlineAndTheOtherTenantIsNotSlowed()
      throws Exception {
    // Counted from the start of the outage: the controller's checks of Running VMIs may meet it
    // before the evacuation does.
    double openedBefore = openedCircuits();
    deadGuest.cluster().stopApiServer();
    try {
      Outage outage =
          evacuateDuringOutage(
              dead,
              nodes.get(0),
              List.of("outage-dead-0", "outage-dead-1"),
              nodes.get(1),
              "outage-ok-1",
              openedBefore);
      outage.assertAll("dead");
    } finally {
      deadGuest.cluster().startApiServer();
    }
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void stalledGuestApiServerOpensTheCircuitTheVmisGoByTheDeadlineAndTheOtherTenantIsNotSlowed()
      throws Exception {
    double openedBefore = openedCircuits();
    proxy = StallingProxy.start();
    // The tenant's kubeconfig Secret now leads to a server that accepts and never answers.
    String kubeconfig =
        guestA.cluster().adminKubeconfigYaml().replace(guestA.cluster().serverUrl(), proxy.url());
    infra
        .cluster()
        .kubectl()
        .runOrFail(
            null,
            "-n",
            stalled.namespace(),
            "patch",
            "secret",
            stalled.name() + "-kubeconfig",
            "--type=merge",
            "-p",
            "{\"data\":{\"value\":\""
                + Base64.getEncoder().encodeToString(kubeconfig.getBytes(StandardCharsets.UTF_8))
                + "\"}}");
    Outage outage =
        evacuateDuringOutage(
            stalled,
            nodes.get(2),
            List.of("outage-stall-0", "outage-stall-1", "outage-stall-2"),
            nodes.get(3),
            "outage-ok-3",
            openedBefore);
    outage.assertAll("stalled");
    assertTrue(proxy.acceptedConnections() > 0, "the controller did reach the stalled endpoint");
  }

  // -----------------------------------------------------------------------------------------------

  /** What one outage run observed. */
  private record Outage(
      TenantCluster tenant,
      Map<String, Instant> deadlines,
      Map<String, Instant> deletedAt,
      List<String> outageVmisLeftWhenHealthyDone,
      double openedBefore,
      double openedAfter) {

    void assertAll(String kind) {
      System.out.printf("outage (%s): deletions vs deadlines: %s%n", kind, describe());
      // The circuit breaker of that tenant opened: counted in the metrics, and logged by name.
      assertTrue(
          openedAfter > openedBefore,
          "vmi_eviction_guest_circuit_opened_total rose: " + openedBefore + " -> " + openedAfter);
      assertTrue(
          ProcessLogs.contains(
              controller.log(),
              "guest circuit opened cluster=" + tenant.namespace() + "/" + tenant.name()),
          "the controller logged the open circuit of " + tenant.name());
      deadlines.forEach(
          (vmi, deadline) -> {
            Instant at = deletedAt.get(vmi);
            assertFalse(
                at.isBefore(deadline.minusSeconds(1)),
                vmi + " deleted at " + at + ", before its deadline " + deadline);
            assertFalse(
                at.isAfter(deadline.plus(DEADLINE_SLACK)),
                vmi + " deleted at " + at + ", later than deadline + 30 s " + deadline);
          });
      for (String vmi : deadlines.keySet()) {
        String reasons = eventReasons(tenant, vmi);
        assertTrue(
            reasons.contains("GuestAPIUnavailable"),
            vmi + " warned that the guest API is unavailable: " + reasons);
        assertTrue(
            reasons.contains("DrainDeadlinePassed"), vmi + " deleted at its deadline: " + reasons);
      }
      // Not held up by the outage: the healthy tenant's evacuation was complete while every VMI of
      // the outage tenant was still there, waiting for its deadline.
      assertEquals(
          List.copyOf(deadlines.keySet()),
          outageVmisLeftWhenHealthyDone,
          "outage tenant's VMIs not yet deleted when the healthy tenant's evacuation completed");
    }

    private String describe() {
      StringBuilder s = new StringBuilder();
      deadlines.forEach(
          (vmi, d) ->
              s.append(vmi)
                  .append(" +")
                  .append(Duration.between(d, deletedAt.get(vmi)).toMillis())
                  .append(" ms; "));
      return s.toString();
    }
  }

  /**
   * Drains {@code outageNode} (the outage tenant's VMIs) and, once KubeVirt has marked those VMIs,
   * {@code healthyNode}; waits for the outage tenant's VMIs to be deleted.
   */
  private static Outage evacuateDuringOutage(
      TenantCluster tenant,
      String outageNode,
      List<String> vmis,
      String healthyNode,
      String healthyVmi,
      double openedBefore)
      throws Exception {
    Map<String, String> uids = new LinkedHashMap<>();
    for (String vmi : vmis) {
      uids.put(vmi, world.vmiUid(tenant, vmi));
    }
    CompletableFuture<Kubectl.Result> outageDrain =
        CompletableFuture.supplyAsync(
            () -> world.drainInfraNode(outageNode, DRAIN_TIMEOUT.plus(Duration.ofMinutes(2))));
    for (String vmi : vmis) {
      Await.until(
          vmi + " marked for evacuation",
          Duration.ofSeconds(60),
          () -> !world.vmiField(tenant, vmi, ".status.evacuationNodeName").isBlank());
    }
    Map<String, Instant> deadlines = new LinkedHashMap<>();
    for (String vmi : vmis) {
      Await.until(
          "drain start of " + vmi + " recorded",
          Duration.ofSeconds(60),
          () -> !startOf(tenant, vmi).isBlank());
      deadlines.put(
          vmi, OffsetDateTime.parse(startOf(tenant, vmi)).toInstant().plus(DRAIN_TIMEOUT));
    }
    // The healthy tenant's evacuation runs while the controller keeps failing on the outage tenant.
    drainHealthy(healthyNode, healthyVmi);
    List<String> outageVmisLeft =
        vmis.stream()
            .filter(
                vmi ->
                    uids.get(vmi).equals(world.vmiUid(tenant, vmi))
                        && world.vmiField(tenant, vmi, ".metadata.deletionTimestamp").isBlank())
            .toList();

    Map<String, Instant> deletedAt = new LinkedHashMap<>();
    for (String vmi : vmis) {
      Await.until(
          vmi + " deleted",
          DRAIN_TIMEOUT.plus(DEADLINE_SLACK).plus(Duration.ofSeconds(60)),
          () -> {
            String now = world.vmiUid(tenant, vmi);
            String deleting = world.vmiField(tenant, vmi, ".metadata.deletionTimestamp");
            return !uids.get(vmi).equals(now) || !deleting.isBlank();
          });
      deletedAt.put(vmi, deletionTime(tenant, vmi, uids.get(vmi)));
    }
    Kubectl.Result r = outageDrain.get(3, TimeUnit.MINUTES);
    assertEquals(0, r.exitCode(), "the infra node drain completed: " + r.stderr());
    return new Outage(tenant, deadlines, deletedAt, outageVmisLeft, openedBefore, openedCircuits());
  }

  /** Drains an infra node holding one healthy VMI, until the VMI was recreated. */
  private static void drainHealthy(String node, String vmi) {
    String uid = world.vmiUid(healthy, vmi);
    Kubectl.Result r = world.drainInfraNode(node, Duration.ofMinutes(3));
    assertEquals(0, r.exitCode(), node + ": " + r.stderr());
    Await.until(
        vmi + " recreated",
        Duration.ofSeconds(60),
        () -> {
          String now = world.vmiUid(healthy, vmi);
          return !now.isBlank() && !now.equals(uid);
        });
    assertTrue(
        eventReasons(healthy, vmi).contains("DrainSucceeded"),
        "the healthy guest node was drained, not timed out");
  }

  private static String startOf(TenantCluster tenant, String vmi) {
    return world.vmiField(
        tenant, vmi, ".metadata.annotations.capk\\.cluster\\.x-k8s\\.io/vmi-drain-start-time");
  }

  /**
   * When the VMI with {@code uid} was deleted: the VMIDeleted event the controller recorded for
   * that UID (its deletion time, as the API server's event timestamps have second precision).
   */
  private static Instant deletionTime(TenantCluster tenant, String vmi, String uid) {
    String[] at = new String[1];
    Await.until(
        "VMIDeleted event of " + vmi,
        Duration.ofSeconds(30),
        () -> {
          at[0] =
              infra
                  .cluster()
                  .kubectl()
                  .run(
                      null,
                      Duration.ofSeconds(10),
                      "-n",
                      tenant.namespace(),
                      "get",
                      "events",
                      "--field-selector",
                      "involvedObject.name="
                          + vmi
                          + ",involvedObject.uid="
                          + uid
                          + ",reason=VMIDeleted",
                      "-o",
                      "jsonpath={.items[0].firstTimestamp}")
                  .stdout()
                  .trim();
          return !at[0].isEmpty();
        });
    return OffsetDateTime.parse(at[0]).toInstant();
  }

  private static String eventReasons(TenantCluster tenant, String vmi) {
    return infra
        .cluster()
        .kubectl()
        .run(
            null,
            Duration.ofSeconds(10),
            "-n",
            tenant.namespace(),
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=" + vmi,
            "-o",
            "jsonpath={.items[*].reason}")
        .stdout();
  }

  private static final Pattern OPENED =
      Pattern.compile("(?m)^vmi_eviction_guest_circuit_opened_total\\s+(\\S+)$");

  private static double openedCircuits() throws Exception {
    Matcher m = OPENED.matcher(controller.metrics());
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }
}
