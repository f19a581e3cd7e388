package dev.capk.vmieviction.e2e.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.ProcessLogs;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.time.Duration;

/**
 * The proof that a deployment shape's RBAC is enough: with the controller running as that shape's
 * ServiceAccount, a real {@code kubectl drain} of the infra node completes, the VMI is recreated,
 * no request was refused, and leader election took its Lease.
 */
public final class ShippedRbacEvacuation {
  private ShippedRbacEvacuation() {}

  /** Drains the first infra node of {@code world}, where {@code vmi} of {@code tenant} runs. */
  public static void assertCompletes(
      EvacuationWorld world,
      TenantCluster tenant,
      String vmi,
      ControllerProcess controller,
      String leaseNamespace) {
    String uid = world.vmiUid(tenant, vmi);
    Kubectl.Result drain = world.drainInfraNode(world.infraNodes().get(0), Duration.ofMinutes(3));
    assertEquals(0, drain.exitCode(), drain.stderr());
    Await.until(
        vmi + " recreated",
        Duration.ofSeconds(60),
        () -> {
          String now = world.vmiUid(tenant, vmi);
          return !now.isBlank() && !now.equals(uid);
        });
    String log = ProcessLogs.tail(controller.log(), 2000);
    assertTrue(
        !log.contains("forbidden") && !log.contains("Forbidden"),
        "no permission was refused:\n" + log);
    String lease =
        world.infra().kubectl().runOrFail(null, "-n", leaseNamespace, "get", "lease", "-o", "name");
    assertTrue(!lease.isBlank(), "leader election took a Lease in " + leaseNamespace);
  }
}
