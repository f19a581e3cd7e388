package dev.capk.vmieviction.api.kubevirt;

/** The values of KubeVirt's {@code evictionStrategy}, as they appear in the API. */
public final class EvictionStrategy {
  private EvictionStrategy() {}

  public static final String NONE = "None";
  public static final String LIVE_MIGRATE = "LiveMigrate";
  public static final String LIVE_MIGRATE_IF_POSSIBLE = "LiveMigrateIfPossible";

  /** KubeVirt refuses the eviction and leaves the VMI to an external controller: this one. */
  public static final String EXTERNAL = "External";
}
