package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestAccessException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads Cluster API's contract for a VMI's machine ({@link ManagementObjects}), decides what it
 * means for this step ({@link MachineContract}) and says so in events: a deadline moved earlier, a
 * contract that could not be read and a Cluster being deleted are told once per evacuation of a
 * VMI, a paused Cluster on every step (as a series). Within a run the contract's deadline only
 * moves earlier, even when the Machine's timeout is raised or the grace time removed mid-drain.
 */
final class MachineContractCheck {

  private static final Logger log = LoggerFactory.getLogger(MachineContractCheck.class);

  /**
   * The contract applied to one step: what to do, by when, and which setting said so; with the
   * Cluster's evacuation limit annotation from the same read, raw, for the admit step, and its
   * live-migration annotation, raw, for the migrate step.
   */
  record Applied(
      MachineContract.Step step,
      Deadline deadline,
      Optional<String> origin,
      Optional<String> clusterEvacuationLimit,
      Optional<String> clusterLiveMigration) {}

  private final ManagementObjects objects;

  /**
   * The earliest deadline a contract set per evacuation ({@code uid/start}): a later evacuation of
   * the same VMI starts afresh.
   */
  private final Cache<String, Earliest> earliest =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  /** A deadline a contract set, and the setting that set it. */
  private record Earliest(Instant at, String origin) {
    Earliest earlier(Earliest other) {
      return other.at.isBefore(at) ? other : this;
    }
  }

  /** {@code uid/start/reason} of the events said once per evacuation of a VMI. */
  private final Cache<String, Boolean> told =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  private final StepContext c;

  MachineContractCheck(StepContext c, ManagementObjects objects) {
    this.c = c;
    this.objects = objects;
  }

  /**
   * @param deadline the deadline from the drain start, the global timeout and the VMI's own grace
   *     time: the returned one is never later
   * @throws GuestAccessException when the objects could not be read: retry, apply nothing
   */
  Applied apply(String key, VirtualMachineInstance vmi, Instant start, Deadline deadline)
      throws GuestAccessException {
    MachineContract.Facts facts = objects.read(vmi);
    MachineContract contract = MachineContract.decide(facts, start, c.settings().drainTimeout());
    String evacuation = vmi.getMetadata().getUid() + "/" + start;
    if (!contract.unavailable().isEmpty()
        && once(evacuation, EventReasons.MACHINE_CONTRACT_UNAVAILABLE)) {
      String what = String.join("; ", contract.unavailable());
      log.warn("cluster api contract not fully known vmi={} missing=\"{}\"", key, what);
      c.events()
          .warning(
              vmi,
              EventReasons.MACHINE_CONTRACT_UNAVAILABLE,
              "Cluster API's settings for this machine could not all be read ("
                  + what
                  + "): what is missing does not apply, the controller's own settings do");
    }

    Optional<String> origin = Optional.empty();
    Optional<Earliest> earlier = earlier(key, vmi, contract, evacuation, deadline);
    if (earlier.isPresent()) {
      deadline = Deadline.at(earlier.get().at(), c.clock());
      origin = Optional.of(earlier.get().origin());
    }
    tellIfDeleting(key, vmi, facts, contract.cluster(), evacuation, deadline);
    tellStep(key, vmi, contract, evacuation, deadline);
    return new Applied(
        contract.step(),
        deadline,
        origin,
        facts.clusterFacts().flatMap(MachineContract.ClusterFacts::evacuationLimit),
        facts.clusterFacts().flatMap(MachineContract.ClusterFacts::liveMigration));
  }

  /**
   * The earliest deadline a contract set in this evacuation, when it is earlier than {@code
   * deadline} (told once per evacuation).
   */
  private Optional<Earliest> earlier(
      String key,
      VirtualMachineInstance vmi,
      MachineContract contract,
      String evacuation,
      Deadline deadline) {
    Optional<Earliest> earlier =
        contract.deadline().map(at -> new Earliest(at, contract.deadlineOrigin()));
    Earliest remembered = earliest.getIfPresent(evacuation);
    if (remembered != null) {
      earlier = Optional.of(earlier.map(remembered::earlier).orElse(remembered));
    }
    if (earlier.isEmpty() || !earlier.get().at().isBefore(deadline.at())) {
      return Optional.empty();
    }
    earliest.put(evacuation, earlier.get());
    if (once(evacuation, EventReasons.DRAIN_DEADLINE_SHORTENED)) {
      log.info(
          "deadline moved earlier by cluster api vmi={} deadline={} origin=\"{}\"",
          key,
          DrainStartTime.format(earlier.get().at()),
          earlier.get().origin());
      c.events()
          .normal(
              vmi,
              EventReasons.DRAIN_DEADLINE_SHORTENED,
              "Deadline moved earlier to "
                  + DrainStartTime.format(earlier.get().at())
                  + " by "
                  + earlier.get().origin()
                  + " (shorter than --drain-timeout; it never moves later)");
    }
    return earlier;
  }

  /** A paused Cluster on every step, a Machine excluded from draining once per evacuation. */
  private void tellStep(
      String key,
      VirtualMachineInstance vmi,
      MachineContract contract,
      String evacuation,
      Deadline deadline) {
    switch (contract.step()) {
      case HOLD_PAUSED -> {
        log.info(
            "cluster paused, guest left untouched vmi={} cluster={} deadline={}",
            key,
            contract.cluster(),
            DrainStartTime.format(deadline.at()));
        c.events()
            .warning(
                vmi,
                EventReasons.CLUSTER_PAUSED,
                "Cluster "
                    + contract.cluster()
                    + " is paused (spec.paused or annotation "
                    + ClusterApi.PAUSED_ANNOTATION
                    + "): its guest node is not cordoned or drained; VMI deleted anyway at "
                    + DrainStartTime.format(deadline.at()));
      }
      case SKIP_DRAIN -> {
        if (once(evacuation, EventReasons.NODE_DRAIN_EXCLUDED)) {
          log.info(
              "machine excluded from draining, deleting without drain vmi={} machine={}",
              key,
              contract.machine());
          c.events()
              .normal(
                  vmi,
                  EventReasons.NODE_DRAIN_EXCLUDED,
                  "Machine "
                      + contract.machine()
                      + " has annotation "
                      + ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION
                      + ": its guest node is not drained, the VMI is deleted now");
        }
      }
      case DRAIN -> {}
    }
  }

  /**
   * Nothing changes for a Cluster being deleted: the tenant's workloads keep their budgets until
   * the VM is gone, and the deadline bounds the wait. The admin learns why the tenant's VMIs go.
   */
  private void tellIfDeleting(
      String key,
      VirtualMachineInstance vmi,
      MachineContract.Facts facts,
      String cluster,
      String evacuation,
      Deadline deadline) {
    Optional<Instant> deleting =
        facts.clusterFacts().flatMap(MachineContract.ClusterFacts::deleting);
    if (deleting.isEmpty() || !once(evacuation, EventReasons.CLUSTER_DELETING)) {
      return;
    }
    Instant since = deleting.get();
    log.info(
        "cluster being deleted, evacuation proceeds vmi={} cluster={} deletionTimestamp={}"
            + " deadline={}",
        key,
        cluster,
        DrainStartTime.format(since),
        DrainStartTime.format(deadline.at()));
    c.events()
        .normal(
            vmi,
            EventReasons.CLUSTER_DELETING,
            "Cluster "
                + cluster
                + " is being deleted (since "
                + DrainStartTime.format(since)
                + "): the evacuation proceeds as usual, its guest node drained first; VMI deleted"
                + " at the latest at "
                + DrainStartTime.format(deadline.at()));
  }

  private boolean once(String evacuation, String reason) {
    return told.asMap().putIfAbsent(evacuation + "/" + reason, Boolean.TRUE) == null;
  }

  /**
   * What Cluster API's own settings for a machine say about the evacuation of its VMI: a paused
   * Cluster holds the guest untouched until the deadline, a Machine excluded from draining is
   * deleted at once, and the Machine's drain timeout or the KubevirtMachine's grace time may move
   * the deadline earlier, never later. What could not be read applies nothing (today's behaviour)
   * and is named in {@link #unavailable}. Pure.
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
     * @param evacuationLimit its {@code capk.cluster.x-k8s.io/max-concurrent-evacuations}
     *     annotation, raw (for {@link TenantAdmission}; this contract does not use it)
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
        this(name, paused, Optional.empty(), Optional.empty(), Optional.empty());
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
    private static Optional<Duration> machineDrainTimeout(
        MachineFacts m, List<String> unavailable) {
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
}
