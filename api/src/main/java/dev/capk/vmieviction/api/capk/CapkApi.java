package dev.capk.vmieviction.api.capk;

/** Group, version and resource names of the CAPK objects we read. */
public final class CapkApi {
  private CapkApi() {}

  public static final String GROUP = "infrastructure.cluster.x-k8s.io";
  public static final String VERSION = "v1alpha1";
  public static final String KUBEVIRT_MACHINE_PLURAL = "kubevirtmachines";
  public static final String KUBEVIRT_MACHINE_KIND = "KubevirtMachine";
}
