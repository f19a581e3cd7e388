package dev.capk.vmieviction.drain;

import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudgetList;
import java.util.Set;
import java.util.TreeSet;

/**
 * Names the PodDisruptionBudgets that select a pod, for a 429 that did not name them: the budgets
 * in the pod's namespace whose selector matches the pod's labels.
 */
final class BudgetResolver {
  private final RawApi api;
  private final PolicyV1Api policy;

  BudgetResolver(RawApi api) {
    this.api = api;
    this.policy = new PolicyV1Api(api.client());
  }

  Set<String> budgetsSelecting(V1Pod pod) {
    Set<String> names = new TreeSet<>();
    try {
      V1PodDisruptionBudgetList list =
          api.get(
              policy
                  .listNamespacedPodDisruptionBudget(pod.getMetadata().getNamespace())
                  .buildCall(null),
              V1PodDisruptionBudgetList.class);
      if (list.getItems() != null) {
        for (V1PodDisruptionBudget b : list.getItems()) {
          if (b.getSpec() != null
              && LabelSelectors.matches(b.getSpec().getSelector(), pod.getMetadata().getLabels())) {
            names.add(b.getMetadata().getName());
          }
        }
      }
    } catch (ApiException e) {
      // Best effort: the names only enrich the report; the retry goes on without them.
    }
    return names;
  }
}
