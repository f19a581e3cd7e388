package dev.capk.vmieviction.eviction;

/**
 * KubeVirt's live migration parallelism ({@code spec.configuration.migrations} of the KubeVirt CR):
 * we never create more migrations than KubeVirt would run at once.
 */
public record MigrationLimits(int perCluster, int outboundPerNode) {

  /**
   * KubeVirt's own defaults (parallelMigrationsPerCluster 5, parallelOutboundMigrationsPerNode 2).
   */
  public static final MigrationLimits KUBEVIRT_DEFAULTS = new MigrationLimits(5, 2);

  /** The CR's values where set and positive, else KubeVirt's defaults. */
  public static MigrationLimits of(Integer perCluster, Integer outboundPerNode) {
    return new MigrationLimits(
        perCluster != null && perCluster > 0 ? perCluster : KUBEVIRT_DEFAULTS.perCluster,
        outboundPerNode != null && outboundPerNode > 0
            ? outboundPerNode
            : KUBEVIRT_DEFAULTS.outboundPerNode);
  }
}
