package dev.capk.vmieviction.api;

/** Annotations this controller (and CAPK before it) writes. */
public final class EvictionAnnotations {
  private EvictionAnnotations() {}

  /** On the VMI: when the drain of its guest node started, RFC 3339 in UTC. */
  public static final String DRAIN_START_TIME = "capk.cluster.x-k8s.io/vmi-drain-start-time";

  /**
   * On the VMI, written by CAPK's own controller: the deadline (RFC 3339) after which the VMI is
   * deleted whatever the drain state. Honoured so clusters migrating from CAPK keep their deadline.
   */
  public static final String CAPK_DELETION_GRACE_TIME =
      "capk.cluster.x-k8s.io/vmi-deletion-grace-time";

  /**
   * On the guest Node: this controller cordoned it, for the VMI with the given UID. Its presence is
   * what allows us to uncordon; a node cordoned by anyone else never carries it.
   */
  public static final String CORDONED_BY = "capk.cluster.x-k8s.io/vmi-eviction-cordoned-for";

  /**
   * On a VMI: the tenant-safety policy let this evacuation go ahead (the value is its drain start:
   * a later evacuation, or a recreated VMI, starts without it).
   */
  public static final String EVACUATION_ADMITTED = "capk.cluster.x-k8s.io/evacuation-admitted";

  /**
   * On a VMI: the phase of its evacuation as the controller last decided it ({@link
   * EvacuationPhase#Held}, {@code Paused}, {@code Migrating} or {@code Draining}), written when it
   * changes and removed when the evacuation is called off: what {@code status} and the phase gauge
   * read.
   */
  public static final String EVACUATION_PHASE = "capk.cluster.x-k8s.io/evacuation-phase";

  /**
   * On a VMI: the live migration attempt under way for this evacuation, {@code <drain start>/<n>}
   * (a later evacuation, or a recreated VMI, starts without it). Written before the migration is
   * created, so a restarted controller follows the same migration and never creates a second.
   */
  public static final String MIGRATION_ATTEMPT = "capk.cluster.x-k8s.io/live-migration-attempt";

  /**
   * On a VMI: this evacuation fell back from live migration to the guest drain (the value is its
   * drain start); once fallen back, always drained.
   */
  public static final String MIGRATION_FALLBACK = "capk.cluster.x-k8s.io/live-migration-fallback";

  /** On a VirtualMachineInstanceMigration we created: the label that selects ours. */
  public static final String MIGRATION_OWNED_LABEL = "capk.cluster.x-k8s.io/evacuation-migration";

  /** On a VirtualMachineInstanceMigration we created: the infra node the VMI leaves. */
  public static final String MIGRATION_SOURCE_NODE = "capk.cluster.x-k8s.io/migration-source-node";
}
