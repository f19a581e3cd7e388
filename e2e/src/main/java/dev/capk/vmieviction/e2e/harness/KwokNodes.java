package dev.capk.vmieviction.e2e.harness;

import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeCondition;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Creates Nodes that kwok manages: kwok keeps them Ready and runs (and deletes) the pods bound to
 * them.
 */
public final class KwokNodes {
  /** The annotation kwok is started to select its nodes by. */
  public static final String MANAGED_ANNOTATION = "kwok.x-k8s.io/node";

  /**
   * The annotation's value that a local cluster's own kwok selects (kwok's conventional "fake").
   */
  static final String LOCAL_KWOK = "fake";

  /** Room for the large-node drain scenarios (1,000 pods on one node). */
  private static final String MAX_PODS = "2000";

  private final CoreV1Api core;
  private final String annotationValue;

  KwokNodes(ApiClient client, String annotationValue) {
    this.core = new CoreV1Api(client);
    this.annotationValue = annotationValue;
  }

  /** Creates nodes {@code prefix-0 .. prefix-(count-1)} and waits until kwok reports each Ready. */
  public List<String> create(String prefix, int count) {
    return create(prefix, count, Map.of());
  }

  /** As {@link #create(String, int)}, with extra labels on each node. */
  public List<String> create(String prefix, int count, Map<String, String> labels) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String name = prefix + "-" + i;
      createOne(name, labels);
      names.add(name);
    }
    for (String name : names) {
      awaitReady(name, Duration.ofSeconds(60));
    }
    return names;
  }

  /**
   * Creates one node called {@code name} (e.g. a guest node named like its VM) and waits until it
   * is Ready.
   */
  public String createNamed(String name, Map<String, String> labels) {
    createOne(name, labels);
    awaitReady(name, Duration.ofSeconds(60));
    return name;
  }

  private void createOne(String name, Map<String, String> extraLabels) {
    Map<String, String> labels =
        new java.util.HashMap<>(
            Map.of(
                "kubernetes.io/hostname", name,
                "kubernetes.io/os", "linux",
                "kubernetes.io/arch", "amd64",
                "type", "kwok"));
    labels.putAll(extraLabels);
    Map<String, Quantity> capacity =
        Map.of(
            "cpu", Quantity.fromString("64"),
            "memory", Quantity.fromString("512Gi"),
            "pods", Quantity.fromString(MAX_PODS));
    V1Node node =
        new V1Node()
            .metadata(
                new V1ObjectMeta()
                    .name(name)
                    .labels(labels)
                    .annotations(
                        Map.of(
                            MANAGED_ANNOTATION,
                            annotationValue,
                            "node.alpha.kubernetes.io/ttl",
                            "0")))
            .status(new V1NodeStatus().capacity(capacity).allocatable(capacity));
    try {
      core.createNode(node).execute();
    } catch (ApiException e) {
      throw new IllegalStateException(
          "cannot create kwok node " + name + ": HTTP " + e.getCode() + " " + e.getResponseBody(),
          e);
    }
  }

  public void awaitReady(String name, Duration timeout) {
    Await.until(
        "kwok node " + name + " to be Ready",
        timeout,
        () -> isReady(core.readNode(name).execute()));
  }

  public static boolean isReady(V1Node node) {
    if (node.getStatus() == null || node.getStatus().getConditions() == null) {
      return false;
    }
    for (V1NodeCondition c : node.getStatus().getConditions()) {
      if ("Ready".equals(c.getType())) {
        return "True".equals(c.getStatus());
      }
    }
    return false;
  }
}
