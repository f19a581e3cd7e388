package dev.capk.vmieviction.api;

/** Labels CAPK and Cluster API put on the objects we read. */
public final class CapkLabels {
  private CapkLabels() {}

  /** On a VMI created by CAPK: the name of its KubevirtMachine. */
  public static final String KUBEVIRT_MACHINE_NAME = "capk.cluster.x-k8s.io/kubevirt-machine-name";

  /** On a VMI created by CAPK: the namespace of its KubevirtMachine (and so of its Cluster). */
  public static final String KUBEVIRT_MACHINE_NAMESPACE =
      "capk.cluster.x-k8s.io/kubevirt-machine-namespace";

  /** Cluster API: the name of the Cluster an object belongs to. */
  public static final String CLUSTER_NAME = "cluster.x-k8s.io/cluster-name";

  /** The default server-side selector of the VMI informer: CAPK's VMIs only. */
  public static final String DEFAULT_VMI_SELECTOR = KUBEVIRT_MACHINE_NAME;

  /** Set by CAPK on the VM template: {@code control-plane} or {@code worker}. */
  public static final String ROLE = "cluster.x-k8s.io/role";

  public static final String ROLE_CONTROL_PLANE = "control-plane";

  /** A guest node's control-plane role label (kubeadm sets it). */
  public static final String NODE_ROLE_CONTROL_PLANE = "node-role.kubernetes.io/control-plane";
}
