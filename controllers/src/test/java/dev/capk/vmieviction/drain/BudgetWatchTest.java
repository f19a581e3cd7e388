package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudgetStatus;
import org.junit.jupiter.api.Test;

class BudgetWatchTest {

  static V1PodDisruptionBudget budget(Long generation, Long observed, Integer allowed) {
    return new V1PodDisruptionBudget()
        .metadata(new V1ObjectMeta().name("pdb").namespace("ns").generation(generation))
        .status(
            new V1PodDisruptionBudgetStatus()
                .observedGeneration(observed)
                .disruptionsAllowed(allowed)
                .currentHealthy(2)
                .desiredHealthy(1)
                .expectedPods(2));
  }

  @Test
  void aBudgetAllowsWhatItsCurrentStatusSaysAndNothingWhileTheStatusIsBehindItsSpec() {
    assertEquals(1, BudgetWatch.disruptionsAllowed(budget(2L, 2L, 1)));
    assertEquals(0, BudgetWatch.disruptionsAllowed(budget(2L, 2L, 0)));
    assertEquals(0, BudgetWatch.disruptionsAllowed(budget(3L, 2L, 1)), "status older than spec");
    assertEquals(0, BudgetWatch.disruptionsAllowed(budget(1L, null, 1)), "never observed");
    assertEquals(
        0,
        BudgetWatch.disruptionsAllowed(
            new V1PodDisruptionBudget().metadata(new V1ObjectMeta().generation(1L))),
        "no status yet");
  }
}
