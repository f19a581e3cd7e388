package dev.capk.vmieviction.e2e.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.ControllerServiceAccount;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The controller needs no more than the RBAC in config/: the whole evacuation runs with it
 * authenticated as its ServiceAccount (with leader election); without one permission it says
 * clearly what it was refused. config/default grants nothing on infra Nodes and Pods: that comes
 * only with the opt-in NodeMaintenance component.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LeastPrivilegeE2EIT {
  // Its own infra cluster: this test changes cluster-wide RBAC.
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("rbac-infra");

  @RegisterExtension
  static final LocalClusterExtension guestA = LocalClusterExtension.shared("e2e-guest-a");

  private static EvacuationWorld world;
  private static TenantCluster tenant;
  private static ControllerProcess controller;

  @BeforeAll
  static void controllerAsItsServiceAccount() {
    world = EvacuationWorld.start(infra.cluster(), "rbac", 3);
    tenant = world.addTenant("a", guestA.cluster());
    world.addVmsOn(world.infraNodes().get(0), tenant, "External", "rbac-a-0");
    world.addVmsOn(world.infraNodes().get(1), tenant, "External", "rbac-a-1");
    world.addVmsOn(world.infraNodes().get(2), tenant, "External", "rbac-a-2");
    tenant.deployProtectedWorkload("app", "svc", 3, 2);
    tenant.awaitAvailable("app", "svc", 3);
    Path kubeconfig = ControllerServiceAccount.install(infra.cluster());
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--kubeconfig=" + kubeconfig,
                "--drain-timeout=5m",
                "--leader-elect",
                "--leader-election-namespace=" + ControllerServiceAccount.NAMESPACE));
    controller = ControllerProcess.start("rbac", infra.cluster().dir(), flags);
  }

  @AfterAll
  static void stop() {
    if (controller != null) controller.close();
    if (world != null) world.close();
    EvacuationWorld.stopStandIn(infra.cluster());
  }

  @Test
  @Order(1)
  void withoutTheNodeMaintenanceComponentTheControllerMayNotTouchInfraNodesOrPods() {
    Kubectl k = infra.cluster().kubectl();
    String as =
        "--as=system:serviceaccount:"
            + ControllerServiceAccount.NAMESPACE
            + ":"
            + ControllerServiceAccount.NAME;
    for (List<String> request :
        List.of(
            List.of("patch", "nodes"),
            List.of("create", "pods/eviction"),
            List.of("delete", "pods"),
            List.of("list", "nodemaintenances.nodemaintenance.medik8s.io"))) {
      // kubectl auth can-i prints "no" and exits 1 when the request would be refused.
      Kubectl.Result r =
          k.run(
              null,
              Duration.ofSeconds(10),
              "auth",
              "can-i",
              request.get(0),
              request.get(1),
              "--all-namespaces",
              as);
      assertEquals("no", r.stdout().strip(), String.join(" ", request) + ": " + r.stderr());
    }
    Kubectl.Result allowed =
        k.run(
            null,
            Duration.ofSeconds(10),
            "auth",
            "can-i",
            "delete",
            "virtualmachineinstances.kubevirt.io",
            "--all-namespaces",
            as);
    assertEquals("yes", allowed.stdout().strip(), "the check itself works: " + allowed.stderr());
  }

  @Test
  @Order(2)
  void theWholeEvacuationRunsWithTheShippedRbac() {
    ShippedRbacEvacuation.assertCompletes(
        world, tenant, "rbac-a-0", controller, ControllerServiceAccount.NAMESPACE);
  }

  @Test
  @Order(3)
  void withoutPermissionToDeleteVmisTheRefusalIsReportedClearly() {
    Kubectl k = infra.cluster().kubectl();
    // The shipped role, less "delete" on virtualmachineinstances.
    String verbs =
        k.runOrFail(
            null,
            "get",
            "clusterrole",
            ControllerServiceAccount.CLUSTER_ROLE,
            "-o",
            "jsonpath={range .rules[*]}{.resources}{.verbs}{\"\\n\"}{end}");
    assertTrue(verbs.contains("delete"), verbs);
    String rules =
        k.runOrFail(
            null, "get", "clusterrole", ControllerServiceAccount.CLUSTER_ROLE, "-o", "json");
    String reduced =
        rules.replaceFirst(
            "(\"virtualmachineinstances\"\\s*\\]\\s*,\\s*\"verbs\"\\s*:\\s*\\[[^\\]]*?),?\\s*\"delete\"",
            "$1");
    assertTrue(!reduced.equals(rules), "the role was reduced");
    k.runOrFail(reduced, "replace", "-f", "-");

    world.drainInfraNode(world.infraNodes().get(1), Duration.ofSeconds(20));
    Await.until(
        "a warning about the refused delete of rbac-a-1",
        Duration.ofSeconds(60),
        () -> {
          String events =
              k.runOrFail(
                  null,
                  "-n",
                  tenant.namespace(),
                  "get",
                  "events",
                  "--field-selector",
                  "involvedObject.name=rbac-a-1,type=Warning",
                  "-o",
                  "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}");
          return events.toLowerCase().contains("forbidden") && events.contains("delete");
        });
    assertEquals(
        "",
        world.vmiField(tenant, "rbac-a-1", ".metadata.deletionTimestamp"),
        "nothing was deleted");
  }
}
