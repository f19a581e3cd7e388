package dev.capk.vmieviction.e2e.kubevirtstandin;

import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * virt-launcher pods: one per running VMI, owned by it, so the garbage collector removes it with
 * the VMI.
 */
final class LauncherPods {
  static final String LAUNCHER_LABEL = "kubevirt.io";
  static final String LAUNCHER_VALUE = "virt-launcher";
  static final String CREATED_BY = "kubevirt.io/created-by";

  private final CoreV1Api core;
  private final DynamicKubernetesApi pods;

  LauncherPods(CoreV1Api core) {
    this.core = core;
    this.pods = new DynamicKubernetesApi("", "v1", "pods", core.getApiClient());
  }

  /**
   * Creates a launcher pod for {@code vmi}; the real scheduler picks its node, never {@code
   * avoidNode}. Written as JSON: the typed V1Pod model serializes empty collections (an empty
   * {@code overhead}), which the API server rejects without a RuntimeClass.
   */
  V1Pod create(DynamicKubernetesObject vmi, String avoidNode) throws ApiException {
    V1ObjectMeta vmiMeta = vmi.getMetadata();
    String suffix = Integer.toString(ThreadLocalRandom.current().nextInt(0x10000, 0xfffff), 36);
    String affinity =
        avoidNode == null
            ? ""
            : """
                ,"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
                {"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"NotIn","values":["%s"]}]}]}}}"""
                .formatted(avoidNode);
    // KubeVirt copies the VMI's nodeSelector to its launcher pod.
    String nodeSelector =
        Vmi.object(vmi.getRaw(), "spec", "nodeSelector")
            .map(o -> ",\"nodeSelector\":" + o)
            .orElse("");
    String json =
        """
                {"apiVersion":"v1","kind":"Pod","metadata":{"name":"virt-launcher-%1$s-%2$s","namespace":"%3$s",
                 "labels":{"%4$s":"%5$s","%6$s":"%7$s","vm.kubevirt.io/name":"%1$s"},
                 "ownerReferences":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","name":"%1$s",
                   "uid":"%7$s","controller":true,"blockOwnerDeletion":true}]},
                 "spec":{"terminationGracePeriodSeconds":30,
                   "containers":[{"name":"compute","image":"virt-launcher:stand-in"}]%8$s%9$s}}"""
            .formatted(
                vmiMeta.getName(),
                suffix,
                vmiMeta.getNamespace(),
                LAUNCHER_LABEL,
                LAUNCHER_VALUE,
                CREATED_BY,
                vmiMeta.getUid(),
                affinity,
                nodeSelector);
    DynamicKubernetesObject created =
        pods.create(new DynamicKubernetesObject(JsonParser.parseString(json).getAsJsonObject()))
            .throwsApiException()
            .getObject();
    return core.readNamespacedPod(created.getMetadata().getName(), vmiMeta.getNamespace())
        .execute();
  }

  /** All launcher pods of the infra cluster. */
  List<V1Pod> all() throws ApiException {
    return core.listPodForAllNamespaces()
        .labelSelector(LAUNCHER_LABEL + "=" + LAUNCHER_VALUE)
        .execute()
        .getItems();
  }

  static boolean isRunning(V1Pod pod) {
    return pod.getMetadata().getDeletionTimestamp() == null
        && pod.getSpec().getNodeName() != null
        && pod.getStatus() != null
        && "Running".equals(pod.getStatus().getPhase());
  }

  static String vmiUid(V1Pod pod) {
    return pod.getMetadata().getLabels() == null
        ? null
        : pod.getMetadata().getLabels().get(CREATED_BY);
  }
}
