package dev.capk.vmieviction.eviction;

import java.util.Optional;

/**
 * KubeVirt's cluster-wide defaults, as the KubeVirt CR holds them. A failed read is {@link
 * Readout.Unreadable}, never "not set": the caller waits rather than apply a default.
 */
public interface ClusterDefaults {

  /** {@code spec.configuration.evictionStrategy} of the KubeVirt CR: empty when it sets none. */
  Readout<Optional<String>> evictionStrategy();

  /** KubeVirt's migration limits from the KubeVirt CR, or KubeVirt's defaults where unset. */
  default Readout<MigrationLimits> migrationLimits() {
    return Readout.answer(MigrationLimits.KUBEVIRT_DEFAULTS);
  }
}
