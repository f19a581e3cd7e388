package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.time.GoDuration;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What Cluster API's own settings for a machine say about the evacuation of its VMI: a paused
 * Cluster holds the guest untouched until the deadline, a Machine excluded from draining is deleted
 * at once, and the Machine's drain timeout or the KubevirtMachine's grace time may move the
 * deadline earlier, never later. What could not be read applies nothing (today's behaviour) and is
 * named in {@link #unavailable}. Pure.
 *
 * @param step what to do with the guest node now
 * @param deadline the earliest deadline these settings set, if earlier than start + the global
 *     drain timeout
 * @param deadlineOrigin which setting set {@code deadline}, for messages (empty without one)
 * @param cluster the Cluster, {@code namespace/name}, for messages
 * @param machine the Machine, {@code namespace/name}, for messages (empty when unknown)
 * @param unavailable what could not be read or used, each a sentence part; empty when all was
 */
public record MachineContract(
    Step step,
    Optional<Instant> deadline,
    String deadlineOrigin,
    String cluster,
    String machine,
    List<String> unavailable) {

  public MachineContract {
    unavailable = List.copyOf(unavailable);
  }

  /** What to do with the guest node. */
  public enum Step {
    /** Cordon and drain as usual. */
    DRAIN,
    /** The Cluster is paused: no write to the guest; look again later, delete at the deadline. */
    HOLD_PAUSED,
    /** The Machine is excluded from draining: delete the VMI now, the guest untouched. */
    SKIP_DRAIN
  }

  /**
   * The Cluster as read.
   *
   * @param evacuationLimit its {@code capk.cluster.x-k8s.io/max-concurrent-evacuations} annotation,
   *     raw (for {@link TenantAdmission}; this contract does not use it)
   * @param deleting its {@code metadata.deletionTimestamp}, when it is being deleted: the
   *     evacuation goes on as usual (told, not decided, here)
   */
  public record ClusterFacts(
      String name,
      boolean paused,
      Optional<String> evacuationLimit,
      Optional<String> liveMigration,
      Optional<Instant> deleting) {
    public ClusterFacts(String name, boolean paused) {
      this(name, paused, Optional.empty(), Optional.empty());
    }

    public ClusterFacts(
        String name,
        boolean paused,
        Optional<String> evacuationLimit,
        Optional<String> liveMigration) {
      this(name, paused, evacuationLimit, liveMigration, Optional.empty());
    }
  }

  /** The KubevirtMachine as read: CAPK's grace time annotation, raw. */
  public record KubevirtMachineFacts(String name, Optional<String> graceTime) {}

  /**
   * The Machine as read.
   *
   * @param nodeDrainTimeout v1beta1's {@code spec.nodeDrainTimeout}, raw
   * @param nodeDrainTimeoutSeconds v1beta2's {@code spec.deletion.nodeDrainTimeoutSeconds}
   */
  public record MachineFacts(
      String name,
      boolean drainExcluded,
      Optional<String> nodeDrainTimeout,
      Optional<Long> nodeDrainTimeoutSeconds) {}

  /**
   * What the reader found; each object absent when it could not be read (not found, not allowed),
   * with the reason in {@code unavailable}. A transient failure is never a Facts: it is retried.
   */
  public record Facts(
      String cluster,
      Optional<ClusterFacts> clusterFacts,
      Optional<KubevirtMachineFacts> kubevirtMachine,
      Optional<MachineFacts> machine,
      List<String> unavailable) {
    public Facts {
      unavailable = List.copyOf(unavailable);
    }
  }

  /**
   * @param start the recorded drain start
   * @param drainTimeout the global drain timeout ({@code --drain-timeout})
   */
  public static MachineContract decide(Facts facts, Instant start, Duration drainTimeout) {
    List<String> unavailable = new ArrayList<>(facts.unavailable());
    boolean paused = facts.clusterFacts().map(ClusterFacts::paused).orElse(false);
    boolean excluded = facts.machine().map(MachineFacts::drainExcluded).orElse(false);
    // Paused wins: Cluster API does nothing at all to a paused Cluster's machines, deleting
    // included.
    Step step = paused ? Step.HOLD_PAUSED : excluded ? Step.SKIP_DRAIN : Step.DRAIN;

    Instant global = start.plus(drainTimeout);
    Instant earliest = global;
    String origin = "";
    if (facts.machine().isPresent()) {
      MachineFacts m = facts.machine().get();
      Optional<Duration> timeout = machineDrainTimeout(m, unavailable);
      // Zero means "no limit" in Cluster API: the global timeout applies.
      if (timeout.isPresent() && !timeout.get().isZero()) {
        Instant at = start.plus(timeout.get());
        if (at.isBefore(earliest)) {
          earliest = at;
          origin =
              "Machine "
                  + m.name()
                  + " node drain timeout "
                  + GoDuration.format(timeout.get())
                  + " from start "
                  + DrainStartTime.format(start);
        }
      }
    }
    if (facts.kubevirtMachine().isPresent()) {
      KubevirtMachineFacts k = facts.kubevirtMachine().get();
      if (k.graceTime().isPresent()) {
        Optional<Instant> grace = DrainStartTime.parseRfc3339(k.graceTime().get());
        if (grace.isEmpty()) {
          unavailable.add(
              "KubevirtMachine "
                  + k.name()
                  + " annotation "
                  + EvictionAnnotations.CAPK_DELETION_GRACE_TIME
                  + " \""
                  + NotEvacuatedNotices.shorten(k.graceTime().get())
                  + "\" is not an RFC 3339 time: ignored");
        } else if (grace.get().isBefore(earliest)) {
          earliest = grace.get();
          origin =
              "KubevirtMachine "
                  + k.name()
                  + " annotation "
                  + EvictionAnnotations.CAPK_DELETION_GRACE_TIME;
        }
      }
    }
    return new MachineContract(
        step,
        earliest.isBefore(global) ? Optional.of(earliest) : Optional.empty(),
        origin,
        facts.cluster(),
        facts.machine().map(MachineFacts::name).orElse(""),
        unavailable);
  }

  /** The Machine's drain timeout in either version's field; v1beta2's wins when both are set. */
  private static Optional<Duration> machineDrainTimeout(MachineFacts m, List<String> unavailable) {
    if (m.nodeDrainTimeoutSeconds().isPresent()) {
      long seconds = m.nodeDrainTimeoutSeconds().get();
      if (seconds >= 0) {
        return Optional.of(Duration.ofSeconds(seconds));
      }
      unavailable.add(
          "Machine "
              + m.name()
              + " spec.deletion.nodeDrainTimeoutSeconds "
              + seconds
              + " is negative: ignored");
      return Optional.empty();
    }
    if (m.nodeDrainTimeout().isPresent()) {
      try {
        return Optional.of(GoDuration.parse(m.nodeDrainTimeout().get()));
      } catch (IllegalArgumentException e) {
        unavailable.add(
            "Machine "
                + m.name()
                + " spec.nodeDrainTimeout \""
                + NotEvacuatedNotices.shorten(m.nodeDrainTimeout().get())
                + "\" is not a duration: ignored");
      }
    }
    return Optional.empty();
  }
}
