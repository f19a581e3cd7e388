package dev.capk.vmieviction.status;

/** Where an evacuation stands, as the infra cluster shows it. */
public enum EvacuationPhase {
  /** KubeVirt marked the VMI; the controller has not recorded a drain start (yet). */
  Pending("marked by KubeVirt, no drain start recorded: is the controller running and watching?"),
  /** The tenant-safety policy holds it (quorum guard, per-cluster limit). */
  Held("held by the tenant-safety policy until its turn (or deadline minus --drain-reserve)"),
  /** Its Cluster is paused: the guest is left alone until the deadline. */
  Paused("the Cluster is paused: the guest node is left alone until the deadline"),
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
}
