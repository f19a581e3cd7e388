package dev.capk.vmieviction.workload;

/**
 * The Cluster API Cluster a VMI belongs to, as a {@link TenantMapping} resolved it: its kubeconfig
 * Secret is {@code <name>-kubeconfig} in the same namespace.
 */
public record GuestClusterRef(String namespace, String name) {

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
