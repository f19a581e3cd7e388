package dev.capk.vmieviction.eviction;

import java.util.Optional;

/** KubeVirt's cluster-wide defaults, as far as they can be read. */
public interface ClusterDefaults {

  /** {@code spec.configuration.evictionStrategy} of the KubeVirt CR, when readable and set. */
  Optional<String> evictionStrategy();

  /** KubeVirt's migration limits from the KubeVirt CR, or KubeVirt's defaults where unset. */
  default MigrationLimits migrationLimits() {
    return MigrationLimits.KUBEVIRT_DEFAULTS;
  }
}
