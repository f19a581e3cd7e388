package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.NodeWatch.BudgetWatch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudgetStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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

  @Test
  void aDeletedBudgetWakesThePodsItRefusedAndSelectsNoneAnyMore() {
    List<String> woken = new ArrayList<>();
    BudgetWatch w =
        BudgetWatch.start(new ApiClient().setBasePath("https://127.0.0.1:1"), "t", woken::add);
    try {
      w.seen("ADDED", budget(1L, 1L, 0));
      assertFalse(w.allows("ns/pdb"));
      w.seen("DELETED", budget(1L, 1L, 0));
      assertEquals(List.of("ns/pdb"), woken);
      assertTrue(w.allows("ns/pdb"), "its refused pods are due at once");
      assertEquals(Set.of(), w.selecting(new V1Pod().metadata(new V1ObjectMeta().namespace("ns"))));
    } finally {
      w.close();
    }
  }
}
