package dev.capk.vmieviction.api;

/**
 * Where an evacuation stands. The controller records the phases it decides ({@link #Held}, {@link
 * #Paused}, {@link #Migrating}, {@link #Draining}) in the VMI's annotation {@link
 * EvictionAnnotations#EVACUATION_PHASE}; the others follow from the VMI itself (no drain start yet,
 * the deadline passed, being deleted).
 */
public enum EvacuationPhase {
  /** KubeVirt marked the VMI; the controller has not recorded a drain start (yet). */
  Pending("marked by KubeVirt, no drain start recorded: is the controller running and watching?"),
  /** The tenant-safety policy holds it (quorum guard, per-cluster limit). */
  Held("held by the tenant-safety policy until its turn (or deadline minus --drain-reserve)"),
  /** Its Cluster is paused: the guest is left alone until the deadline. */
  Paused("the Cluster is paused: the guest node is left alone until the deadline"),
  /** A live migration of ours moves it (or waits for a free migration slot). */
  Migrating("being live-migrated; the guest drain follows if the migration fails or is late"),
  /** The guest node is being cordoned and drained. */
  Draining("the guest node is being drained"),
  /** The deadline has passed: the controller deletes the VMI whatever the drain state. */
  DeadlinePassed("past the deadline: the VMI is deleted whatever the drain state"),
  /** The VMI is being deleted: KubeVirt recreates it on another node. */
  WaitingForRecreate("the VMI is being deleted; KubeVirt recreates it on another node");

  /** One sentence for the docs and {@code --help}. */
  public final String meaning;

  EvacuationPhase(String meaning) {
    this.meaning = meaning;
  }

  /** The recorded phase named {@code raw}, if it is one the controller records. */
  public static java.util.Optional<EvacuationPhase> recorded(String raw) {
    for (EvacuationPhase p : new EvacuationPhase[] {Held, Paused, Migrating, Draining}) {
      if (p.name().equals(raw)) {
        return java.util.Optional.of(p);
      }
    }
    return java.util.Optional.empty();
  }
}
