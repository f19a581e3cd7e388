package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1Pod;
import java.util.Set;

/**
 * What is known now of a cluster's PodDisruptionBudgets (a budget watch's cache, {@link
 * BudgetWatch}), so that a drain step sends no more evictions for a budget's pods than the budget
 * allows: the rest would only be refused (429). The eviction API stays the judge; this only spares
 * requests that cannot succeed.
 */
public interface BudgetAllowance {

  /** Nothing known: every due pod is sent its eviction, as kubectl does. */
  BudgetAllowance UNKNOWN =
      new BudgetAllowance() {
        @Override
        public Set<String> selecting(V1Pod pod) {
          return Set.of();
        }

        @Override
        public int take(String budget, int wanted) {
          return wanted;
        }
      };

  /** The known budgets ({@code namespace/name}) that select {@code pod}; empty if none is known. */
  Set<String> selecting(V1Pod pod);

  /**
   * Takes up to {@code wanted} of the disruptions {@code budget} allows now and not yet taken since
   * its status was last seen.
   *
   * @return how many were granted
   */
  int take(String budget, int wanted);
}
