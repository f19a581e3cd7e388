package dev.capk.vmieviction.e2e.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The infra API server goes away mid-evacuation and comes back on the same etcd: the controller's
 * informer resumes, and the evacuations it had not finished, and those marked after the outage, all
 * complete.
 */
class InfraApiServerRestartE2EIT {
  // Its own infra cluster: its API server is restarted.
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("restart-infra");

  @RegisterExtension
  static final LocalClusterExtension guestA = LocalClusterExtension.shared("e2e-guest-a");

  private static ControllerProcess controller;
  private static EvacuationWorld world;

  @AfterAll
  static void stop() {
    if (controller != null) controller.close();
    if (world != null) world.close();
    EvacuationWorld.stopStandIn(infra.cluster());
  }

  @Test
  void theInformerResumesAfterAnApiServerRestartAndNothingIsMissed() throws Exception {
    world = EvacuationWorld.start(infra.cluster(), "restart", 3);
    TenantCluster tenant = world.addTenant("a", guestA.cluster());
    world.addVmsOn(world.infraNodes().get(2), tenant, "External", "restart-a-anchor");
    world.addVmsOn(world.infraNodes().get(0), tenant, "External", "restart-a-0", "restart-a-1");
    world.addVmsOn(world.infraNodes().get(1), tenant, "External", "restart-a-2");
    tenant.deployProtectedWorkload("app", "svc", 6, 5);
    tenant.awaitAvailable("app", "svc", 6);
    List<String> vmis = List.of("restart-a-0", "restart-a-1", "restart-a-2");
    List<String> uids = vmis.stream().map(v -> world.vmiUid(tenant, v)).toList();
    List<String> flags =
        new ArrayList<>(
            List.of("--kubeconfig=" + infra.cluster().kubeconfig(), "--drain-timeout=5m"));
    flags.addAll(world.controllerNamespaceFlags());
    controller = ControllerProcess.start("restart", infra.cluster().dir(), flags);

    // Node 0 starts draining; the API server goes down mid-way for 5 s.
    Kubectl.Result first = world.drainInfraNode(world.infraNodes().get(0), Duration.ofSeconds(2));
    System.out.println("drain before the restart (expected to time out): exit " + first.exitCode());
    infra.cluster().restartApiServer(Duration.ofSeconds(5));
    assertTrue(controller.isAlive(), "the controller survives the outage");
    // After the restart: finish node 0, then node 1, whose VMI is marked only now.
    for (String node : List.of(world.infraNodes().get(0), world.infraNodes().get(1))) {
      Kubectl.Result r = world.drainInfraNode(node, Duration.ofMinutes(3));
      assertEquals(0, r.exitCode(), node + ": " + r.stderr());
    }
    for (int i = 0; i < vmis.size(); i++) {
      String vmi = vmis.get(i);
      String uid = uids.get(i);
      Await.until(
          vmi + " recreated after its evacuation",
          Duration.ofSeconds(60),
          () -> {
            String now = world.vmiUid(tenant, vmi);
            return !now.isBlank() && !now.equals(uid);
          });
    }
  }
}
