package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import java.time.Duration;

/**
 * What keeps an admitted VMI under way until its deadline, for the tests of held evacuations: a
 * guest pod no drain can evict (alone under a budget of {@code minAvailable: 1}) and a shorter
 * drain timeout on the VMI's Machine (Cluster API's contract).
 */
public final class HeldUntilDeadline {
  private HeldUntilDeadline() {}

  /**
   * A pod bound to guest node {@code node}, in {@code namespace}, that its budget never lets go.
   */
  public static void unevictablePod(KubeCluster guest, String namespace, String node) {
    guest
        .kubectl()
        .apply(
            """
            apiVersion: v1
            kind: Namespace
            metadata: {name: %2$s}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {name: %1$s-pinned, namespace: %2$s, labels: {app: %1$s-pinned}}
            spec:
              nodeName: %1$s
              terminationGracePeriodSeconds: 1
              containers: [{name: main, image: pinned:fake}]
            ---
            apiVersion: policy/v1
            kind: PodDisruptionBudget
            metadata: {name: %1$s-pinned, namespace: %2$s}
            spec:
              minAvailable: 1
              selector: {matchLabels: {app: %1$s-pinned}}
            """
                .formatted(node, namespace));
  }

  /** The Machine's {@code spec.nodeDrainTimeout} (v1beta1), which shortens its VMI's deadline. */
  public static void machineDrainTimeout(
      KubeCluster infra, String namespace, String machine, Duration timeout) {
    infra
        .kubectl()
        .runOrFail(
            null,
            "-n",
            namespace,
            "patch",
            "machines.cluster.x-k8s.io",
            machine,
            "--type=merge",
            "-p",
            "{\"spec\":{\"nodeDrainTimeout\":\"" + timeout.toSeconds() + "s\"}}");
  }
}
