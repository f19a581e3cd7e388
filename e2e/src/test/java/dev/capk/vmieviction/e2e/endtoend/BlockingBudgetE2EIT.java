package dev.capk.vmieviction.e2e.endtoend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Closing;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.ScenarioClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No tenant can hold an infra drain forever: a budget that never allows disruption yields to the
 * deadline.
 */
class BlockingBudgetE2EIT {
  @RegisterExtension static final ScenarioClusterExtension infra = E2EClusters.infra();
  @RegisterExtension static final ScenarioClusterExtension guestA = E2EClusters.guestA();

  private static EvacuationWorld world;
  private static TenantCluster tenant;
  private static ControllerProcess controller;
  private static String drained;
  private static String uidBefore;
  private static Kubectl.Result drainResult;
  private static String podUidsBefore;

  @BeforeAll
  static void drainAgainstABlockingBudget() {
    world = EvacuationWorld.start(infra.cluster(), "block", 2);
    drained = world.infraNodes().get(0);
    tenant = world.addTenant("a", guestA.cluster());
    world.addVmsOn(drained, tenant, "External", "block-a-0");
    // Every replica is required: this budget never allows a disruption. Both pods land on
    // block-a-0, the tenant's only node yet, so its drain must meet the budget.
    tenant.deployProtectedWorkload("vault", "vault", 2, 2);
    tenant.awaitAvailable("vault", "vault", 2);
    world.addVmsOn(world.infraNodes().get(1), tenant, "External", "block-a-1");
    uidBefore = world.vmiUid(tenant, "block-a-0");
    podUidsBefore = podUids();

    List<String> flags =
        new ArrayList<>(
            List.of("--kubeconfig=" + infra.cluster().kubeconfig(), "--drain-timeout=20s"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("block", infra.cluster().dir(), flags);
    long began = System.nanoTime();
    drainResult = world.drainInfraNode(drained, Duration.ofMinutes(3));
    System.out.printf(
        "e2e: kubectl drain %s against a blocking budget took %d ms (drain timeout 20s)%n",
        drained, (System.nanoTime() - began) / 1_000_000);
  }

  @AfterAll
  static void stop() {
    Closing.all(controller, world);
  }

  @Test
  void theInfraDrainStillCompletesAfterTheDeadline() {
    assertEquals(0, drainResult.exitCode(), drainResult.stderr() + drainResult.stdout());
    Await.until(
        "block-a-0 replaced",
        Duration.ofSeconds(60),
        () -> {
          String uid = world.vmiUid(tenant, "block-a-0");
          return !uid.isBlank() && !uid.equals(uidBefore);
        });
  }

  @Test
  void warningEventsOnTheVmiNameTheBlockingBudget() {
    String events =
        infra
            .cluster()
            .kubectl()
            .runOrFail(
                null,
                "-n",
                tenant.namespace(),
                "get",
                "events",
                "--field-selector",
                "involvedObject.kind=VirtualMachineInstance,involvedObject.name=block-a-0,type=Warning",
                "-o",
                "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}");
    assertTrue(events.contains("DrainDeadlinePassed"), "deadline event: " + events);
    assertTrue(
        events.lines().anyMatch(l -> l.contains("vault/vault") || l.contains("vault")),
        "budget named: " + events);
  }

  @Test
  void theProtectedPodsWereNeverEvicted() {
    String available =
        tenant
            .guest()
            .kubectl()
            .runOrFail(
                null,
                "-n",
                "vault",
                "get",
                "deploy",
                "vault",
                "-o",
                "jsonpath={.status.availableReplicas}");
    assertEquals("2", available);
    assertEquals(podUidsBefore, podUids(), "the same two pods run: none was evicted");
  }

  private static String podUids() {
    return tenant
        .guest()
        .kubectl()
        .runOrFail(
            null,
            "-n",
            "vault",
            "get",
            "pods",
            "-l",
            "app=vault",
            "--sort-by=.metadata.uid",
            "-o",
            "jsonpath={.items[*].metadata.uid}");
  }
}
