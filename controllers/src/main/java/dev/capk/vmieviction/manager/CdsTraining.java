package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList;
import dev.capk.vmieviction.kube.LenientJson;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The training run of the build's class-data-sharing archive ({@code java
 * -XX:ArchiveClassesAtExit=vmi-eviction-controller.jsa -cp vmi-eviction-controller.jar
 * dev.capk.vmieviction.manager.CdsTraining}): loads the classes a manager's start-up loads, so that
 * a start with {@code -XX:SharedArchiveFile} maps them instead of loading and verifying them one by
 * one. Reaches no cluster: the kubeconfig names a port nothing listens on, so the informers' first
 * lists fail and are retried until the manager is closed; one VMI list is decoded as the informers
 * would decode it.
 */
public final class CdsTraining {
  private CdsTraining() {}

  /** How long the manager runs: long enough for every informer to try its first list. */
  private static final long RUN_MILLIS = 2_000;

  private static final String KUBECONFIG =
      """
      apiVersion: v1
      kind: Config
      clusters:
      - name: nowhere
        cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
      users:
      - name: training
        user: {token: not-a-secret}
      contexts:
      - name: training
        context: {cluster: nowhere, user: training}
      current-context: training
      """;

  private static final String VMI_LIST =
      """
      {"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstanceList",
       "metadata":{"resourceVersion":"1","continue":""},
       "items":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
        "metadata":{"name":"vm-0","namespace":"tenant","uid":"u-0","resourceVersion":"1",
         "creationTimestamp":"2026-01-01T00:00:00Z",
         "labels":{"cluster.x-k8s.io/cluster-name":"tenant",
          "capk.cluster.x-k8s.io/kubevirt-machine-name":"vm-0",
          "capk.cluster.x-k8s.io/kubevirt-machine-namespace":"tenant",
          "cluster.x-k8s.io/role":"worker"},
         "annotations":{"capk.cluster.x-k8s.io/vmi-drain-start-time":"2026-01-01T00:00:00Z"},
         "managedFields":[{"manager":"virt-handler","operation":"Update",
          "time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{}}}]},
        "spec":{"evictionStrategy":"External","domain":{"cpu":{"cores":2}}},
        "status":{"phase":"Running","nodeName":"infra-0","evacuationNodeName":"infra-0"}}]}
      """;

  public static void main(String[] args) throws Exception {
    LenientJson.install();
    VirtualMachineInstanceList list = LenientJson.parse(VMI_LIST, VirtualMachineInstanceList.class);
    list.getItems().forEach(VmiInformers::trim);
    Path dir = Files.createTempDirectory("cds-training");
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, KUBECONFIG, StandardCharsets.UTF_8);
    Manager manager =
        Main.start(
            "--kubeconfig", kubeconfig.toString(),
            "--metrics-bind-address", "127.0.0.1:0",
            "--health-probe-bind-address", "127.0.0.1:0");
    Thread.sleep(RUN_MILLIS);
    manager.close();
    Files.deleteIfExists(kubeconfig);
    Files.deleteIfExists(dir);
    // Exit now: threads the client leaves behind must not keep the JVM (and the build) waiting.
    System.exit(0);
  }
}
