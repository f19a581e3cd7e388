package dev.capk.vmieviction.eviction;

import java.util.Locale;
import java.util.Optional;

/** Whether an External VMI is live-migrated before its guest node is drained. */
public enum LiveMigrationPolicy {
  /** Today's evacuation: drain the guest node, delete the VMI. */
  NEVER("never"),
  /** Live-migrate a LiveMigratable VMI; drain and delete only as the fallback. */
  PREFER("prefer");

  public final String value;

  LiveMigrationPolicy(String value) {
    this.value = value;
  }

  /** The policy a flag or annotation value names, or empty when it names none. */
  public static Optional<LiveMigrationPolicy> parse(String raw) {
    if (raw == null) {
      return Optional.empty();
    }
    String v = raw.trim().toLowerCase(Locale.ROOT);
    for (LiveMigrationPolicy p : values()) {
      if (p.value.equals(v)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
