package dev.capk.vmieviction.api.kubevirt;

/** Group, version and resource names of the KubeVirt API we use. */
public final class KubeVirtApi {
  private KubeVirtApi() {}

  public static final String GROUP = "kubevirt.io";
  public static final String VERSION = "v1";
  public static final String API_VERSION = GROUP + "/" + VERSION;
  public static final String VMI_PLURAL = "virtualmachineinstances";
  public static final String VMI_KIND = "VirtualMachineInstance";
  public static final String KUBEVIRT_PLURAL = "kubevirts";
  public static final String KUBEVIRT_KIND = "KubeVirt";
  public static final String MIGRATION_PLURAL = "virtualmachineinstancemigrations";
  public static final String MIGRATION_KIND = "VirtualMachineInstanceMigration";
}
