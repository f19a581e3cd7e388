package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * One tenant ("guest") cluster as CAPK lays it out: in the management cluster a Cluster API
 * Cluster, its kubeconfig Secret {@code <cluster>-kubeconfig} (key {@code value}) and a Machine and
 * KubevirtMachine per VM; in the infra cluster one VirtualMachine per guest node, labelled as CAPK
 * labels them. Management and infra are one cluster unless the tenant runs on external infra. The
 * guest cluster itself is a real local control plane whose kwok nodes are named like the VMs, as a
 * VM's hostname names its node.
 */
public final class TenantCluster {
  /**
   * On each guest node: the tenant it belongs to, so that tenants sharing a guest cluster keep
   * their pods apart.
   */
  public static final String TENANT_LABEL = "e2e.capk.dev/tenant";

  private final KubeCluster management;
  private final KubeCluster infra;
  private final KubeCluster guest;
  private final String name;
  private final String namespace;
  private final List<String> vms = new ArrayList<>();

  private TenantCluster(
      KubeCluster management, KubeCluster infra, KubeCluster guest, String name, String namespace) {
    this.management = management;
    this.infra = infra;
    this.guest = guest;
    this.name = name;
    this.namespace = namespace;
  }

  /** Creates the namespace, the Cluster and the kubeconfig Secret in the infra cluster. */
  public static TenantCluster create(
      KubeCluster infra, KubeCluster guest, String name, String namespace) {
    return create(infra, infra, guest, name, namespace);
  }

  /**
   * Creates the namespace in both clusters, and the Cluster and the kubeconfig Secret in the
   * management cluster: a tenant whose VMs run in an external infra cluster.
   */
  public static TenantCluster create(
      KubeCluster management, KubeCluster infra, KubeCluster guest, String name, String namespace) {
    TenantCluster t = new TenantCluster(management, infra, guest, name, namespace);
    if (infra != management) {
      infra
          .kubectl()
          .apply(
              """
                  apiVersion: v1
                  kind: Namespace
                  metadata: {name: %s}
                  """
                  .formatted(namespace));
    }
    management
        .kubectl()
        .apply(
            """
                apiVersion: v1
                kind: Namespace
                metadata: {name: %2$s}
                ---
                apiVersion: cluster.x-k8s.io/v1beta1
                kind: Cluster
                metadata: {name: %1$s, namespace: %2$s}
                spec:
                  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: KubevirtCluster, name: %1$s}
                """
                .formatted(name, namespace));
    t.useKubeconfig(guest.adminKubeconfigYaml());
    return t;
  }

  /**
   * Writes the kubeconfig Secret {@code <cluster>-kubeconfig} (key {@code value}, labelled as CAPI
   * labels it) with {@code kubeconfigYaml}: the guest identity the controller will use.
   */
  public void useKubeconfig(String kubeconfigYaml) {
    String kubeconfig =
        Base64.getEncoder().encodeToString(kubeconfigYaml.getBytes(StandardCharsets.UTF_8));
    management
        .kubectl()
        .apply(
            """
                apiVersion: v1
                kind: Secret
                metadata:
                  name: %1$s-kubeconfig
                  namespace: %2$s
                  labels: {cluster.x-k8s.io/cluster-name: %1$s}
                type: cluster.x-k8s.io/secret
                data:
                  value: %3$s
                """
                .formatted(name, namespace, kubeconfig));
  }

  /**
   * Adds a guest node: a VirtualMachine (eviction strategy {@code strategy}, or the cluster default
   * when null) in the infra cluster, and a kwok node of the same name in the guest cluster.
   */
  public String addVm(String vmName, String strategy) {
    return addVm(vmName, strategy, Map.of());
  }

  /**
   * As {@link #addVm(String, String)}, with a VMI nodeSelector (KubeVirt copies it to the launcher
   * pod).
   */
  public String addVm(String vmName, String strategy, Map<String, String> nodeSelector) {
    return addVm(vmName, strategy, nodeSelector, false);
  }

  /**
   * As {@link #addVm(String, String, Map)}; a control-plane VM carries CAPK's {@code
   * cluster.x-k8s.io/role: control-plane} label and its guest node the control-plane role label.
   */
  public String addVm(
      String vmName, String strategy, Map<String, String> nodeSelector, boolean controlPlane) {
    String strategyLine = strategy == null ? "" : "evictionStrategy: " + strategy;
    StringBuilder selector = new StringBuilder();
    nodeSelector.forEach(
        (k, v) ->
            selector.append(selector.length() == 0 ? "" : ", ").append(k).append(": ").append(v));
    infra
        .kubectl()
        .apply(
            """
                apiVersion: kubevirt.io/v1
                kind: VirtualMachine
                metadata:
                  name: %1$s
                  namespace: %2$s
                  labels: {cluster.x-k8s.io/cluster-name: %3$s}
                spec:
                  running: true
                  template:
                    metadata:
                      labels:
                        kubevirt.io/vm: %1$s
                        cluster.x-k8s.io/cluster-name: %3$s
                        capk.cluster.x-k8s.io/kubevirt-machine-name: %1$s
                        capk.cluster.x-k8s.io/kubevirt-machine-namespace: %2$s
                        cluster.x-k8s.io/role: %6$s
                    spec:
                      %4$s
                      nodeSelector: {%5$s}
                      domain:
                        cpu: {cores: 2}
                        memory: {guest: 4Gi}
                        devices:
                          disks: [{name: root, disk: {bus: virtio}}]
                          interfaces: [{name: default, masquerade: {}}]
                      networks: [{name: default, pod: {}}]
                      volumes: [{name: root, containerDisk: {image: quay.io/capk/ubuntu-2204-container-disk:v1.33}}]
                """
                .formatted(
                    vmName,
                    namespace,
                    name,
                    strategyLine,
                    selector,
                    controlPlane ? "control-plane" : "worker"));
    addMachine(vmName);
    guest
        .kwokNodes()
        .createNamed(
            vmName,
            Map.of(
                controlPlane
                    ? "node-role.kubernetes.io/control-plane"
                    : "node-role.kubernetes.io/worker",
                "",
                TENANT_LABEL,
                name));
    vms.add(vmName);
    return vmName;
  }

  /**
   * What Cluster API and CAPK keep for each VM: a Machine, and the KubevirtMachine it owns, named
   * like the VM (the VMI's {@code kubevirt-machine-name} label). The controller reads them for
   * Cluster API's drain contract.
   */
  private void addMachine(String vmName) {
    management
        .kubectl()
        .apply(
            """
                apiVersion: cluster.x-k8s.io/v1beta1
                kind: Machine
                metadata:
                  name: %1$s
                  namespace: %2$s
                  labels: {cluster.x-k8s.io/cluster-name: %3$s}
                spec:
                  clusterName: %3$s
                """
                .formatted(vmName, namespace, name));
    String machineUid =
        management
            .kubectl()
            .runOrFail(
                null,
                "-n",
                namespace,
                "get",
                "machines.cluster.x-k8s.io",
                vmName,
                "-o",
                "jsonpath={.metadata.uid}")
            .trim();
    management
        .kubectl()
        .apply(
            """
                apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
                kind: KubevirtMachine
                metadata:
                  name: %1$s
                  namespace: %2$s
                  labels: {cluster.x-k8s.io/cluster-name: %3$s}
                  ownerReferences:
                  - {apiVersion: cluster.x-k8s.io/v1beta1, kind: Machine, name: %1$s, uid: %4$s}
                """
                .formatted(vmName, namespace, name, machineUid));
  }

  /**
   * A Deployment of {@code replicas} pods with a PodDisruptionBudget of {@code minAvailable}, in
   * the guest, on this tenant's guest nodes only.
   */
  public void deployProtectedWorkload(String ns, String app, int replicas, int minAvailable) {
    guest
        .kubectl()
        .apply(
            """
                apiVersion: v1
                kind: Namespace
                metadata: {name: %1$s}
                ---
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: %2$s, namespace: %1$s}
                spec:
                  replicas: %3$d
                  selector: {matchLabels: {app: %2$s}}
                  template:
                    metadata: {labels: {app: %2$s}}
                    spec:
                      terminationGracePeriodSeconds: 1
                      nodeSelector: {%5$s: %6$s}
                      containers: [{name: main, image: %2$s:fake}]
                ---
                apiVersion: policy/v1
                kind: PodDisruptionBudget
                metadata: {name: %2$s, namespace: %1$s}
                spec:
                  minAvailable: %4$d
                  selector: {matchLabels: {app: %2$s}}
                """
                .formatted(ns, app, replicas, minAvailable, TENANT_LABEL, name));
  }

  /** Waits until {@code app} in guest namespace {@code ns} has {@code count} available replicas. */
  public void awaitAvailable(String ns, String app, int count) {
    dev.capk.vmieviction.e2e.harness.Await.until(
        count + " available " + app + " pods in " + name,
        java.time.Duration.ofSeconds(90),
        () ->
            guest
                .kubectl()
                .run(
                    null,
                    java.time.Duration.ofSeconds(10),
                    "-n",
                    ns,
                    "get",
                    "deploy",
                    app,
                    "-o",
                    "jsonpath={.status.availableReplicas}")
                .stdout()
                .equals(Integer.toString(count)));
  }

  public String name() {
    return name;
  }

  public String namespace() {
    return namespace;
  }

  public KubeCluster guest() {
    return guest;
  }

  /** Where Cluster API's objects of this tenant live (the infra cluster, unless external). */
  public KubeCluster management() {
    return management;
  }

  /** Where this tenant's VMs run. */
  public KubeCluster infra() {
    return infra;
  }

  public List<String> vms() {
    return List.copyOf(vms);
  }

  public Map<String, String> labels() {
    return Map.of("cluster.x-k8s.io/cluster-name", name);
  }
}
