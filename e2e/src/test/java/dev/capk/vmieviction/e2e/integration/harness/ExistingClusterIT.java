package dev.capk.vmieviction.e2e.integration.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.ClusterBackend;
import dev.capk.vmieviction.e2e.harness.ExistingCluster;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubeconfig backend (clusters the harness did not start, e.g. kind) against a real API server:
 * a running local cluster is handed over by nothing but its admin kubeconfig file.
 */
class ExistingClusterIT {
  @RegisterExtension static final LocalClusterExtension ext = LocalClusterExtension.shared("infra");

  @Test
  void aClusterGivenByKubeconfigRunsKwokNodesOfItsOwnAndLeavesNothingBehind() {
    LocalCluster local = ext.cluster();
    long kwokPid;
    String node = "existing-kwok-0";
    try (ExistingCluster cluster =
        ExistingCluster.fromKubeconfig("existing-it", local.kubeconfig(), "127.0.0.1")) {
      assertEquals(local.serverUrl(), cluster.serverUrl());
      assertEquals(local.caCertificatePem().strip(), cluster.caCertificatePem().strip());
      assertTrue(cluster.callbacksArriveOnLoopback());
      kwokPid = cluster.pids().get(0);

      // The local cluster's own kwok selects another annotation value: only the harness's new kwok
      // can make this node Ready and run its pod.
      assertEquals(List.of(node), cluster.kwokNodes().create("existing-kwok", 1));
      cluster.kubectl().runOrFail(null, "create", "namespace", "existing-it");
      cluster
          .kubectl()
          .apply(
              """
                    apiVersion: v1
                    kind: Pod
                    metadata: {name: p, namespace: existing-it}
                    spec:
                      nodeName: %s
                      containers: [{name: c, image: fake}]
                    """
                  .formatted(node));
      Await.until(
          "pod existing-it/p Running on " + node,
          Duration.ofSeconds(60),
          () ->
              "Running"
                  .equals(
                      cluster
                          .kubectl()
                          .run(
                              null,
                              Duration.ofSeconds(10),
                              "-n",
                              "existing-it",
                              "get",
                              "pod",
                              "p",
                              "-o",
                              "jsonpath={.status.phase}")
                          .stdout()));

      // What the scenarios hand the controller: a ServiceAccount token kubeconfig built from the
      // server and CA the backend read out of the file.
      cluster.kubectl().runOrFail(null, "-n", "existing-it", "create", "serviceaccount", "reader");
      String token =
          cluster
              .kubectl()
              .runOrFail(null, "-n", "existing-it", "create", "token", "reader")
              .strip();
      Path sa = cluster.dir().resolve("reader.kubeconfig");
      writeString(
          sa, cluster.kubeconfigWithToken("system:serviceaccount:existing-it:reader", token));
      String whoami =
          new dev.capk.vmieviction.e2e.harness.Kubectl(local.binaries().kubectl(), sa)
              .runOrFail(null, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}");
      assertEquals("system:serviceaccount:existing-it:reader", whoami.strip());
    } finally {
      local
          .kubectl()
          .run(null, Duration.ofSeconds(60), "delete", "namespace", "existing-it", "--wait=false");
    }
    assertFalse(
        ProcessHandle.of(kwokPid).map(ProcessHandle::isAlive).orElse(false),
        "the harness's kwok (pid " + kwokPid + ") is stopped");
    Await.until(
        "kwok node " + node + " removed",
        Duration.ofSeconds(30),
        () ->
            new CoreV1Api(local.client())
                .listNode().execute().getItems().stream()
                    .noneMatch(n -> node.equals(n.getMetadata().getName())));
  }

  @Test
  void kubeconfigsTheScenariosCannotUseAreRefusedWithAReasonAndWithoutTheirContents(
      @TempDir Path dir) throws Exception {
    LocalCluster local = ext.cluster();
    String secretish = "token: do-not-print-me-0123456789";

    Path fileRefs = dir.resolve("file-refs.kubeconfig");
    writeString(
        fileRefs,
        local
            .adminKubeconfigYaml()
            .replace(
                "certificate-authority-data:", "certificate-authority: /etc/ca.crt\n    x-data:"));
    IllegalArgumentException refs =
        assertThrows(
            IllegalArgumentException.class,
            () -> ExistingCluster.fromKubeconfig("refs", fileRefs, "127.0.0.1"));
    assertTrue(refs.getMessage().contains("refers to files or plugins"), refs.getMessage());

    Path garbage = dir.resolve("garbage.kubeconfig");
    writeString(garbage, "clusters: [ {" + secretish);
    IllegalArgumentException bad =
        assertThrows(
            IllegalArgumentException.class,
            () -> ExistingCluster.fromKubeconfig("garbage", garbage, "127.0.0.1"));
    assertTrue(
        bad.getMessage().startsWith("kubeconfig of cluster garbage is not a valid kubeconfig"),
        bad.getMessage());
    assertFalse(bad.getMessage().contains("do-not-print-me"), bad.getMessage());

    IllegalArgumentException missing =
        assertThrows(
            IllegalArgumentException.class,
            () -> ExistingCluster.fromKubeconfig("missing", dir.resolve("nope"), "127.0.0.1"));
    assertTrue(missing.getMessage().contains("not readable"), missing.getMessage());
  }

  @Test
  void theKubeconfigBackendSaysWhichKubeconfigIsMissingAndAnUnknownBackendIsNamed() {
    String role = "no-such-role-" + System.nanoTime();
    assertEquals(
        "kubeconfig backend: no kubeconfig for cluster "
            + role
            + "; set -Dcapk.e2e.kubeconfig."
            + role
            + "=<file>",
        ClusterBackend.KUBECONFIG.unavailableReason(role).orElseThrow());
    assertTrue(ClusterBackend.LOCAL.unavailableReason(role).isEmpty());
    String before = System.getProperty(ClusterBackend.PROPERTY);
    try {
      System.setProperty(ClusterBackend.PROPERTY, "minikube");
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, ClusterBackend::selected);
      assertEquals(
          "-Dcapk.e2e.backend=minikube: unknown backend; use local, k3s or kubeconfig",
          e.getMessage());
    } finally {
      if (before == null) System.clearProperty(ClusterBackend.PROPERTY);
      else System.setProperty(ClusterBackend.PROPERTY, before);
    }
  }

  private static void writeString(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
