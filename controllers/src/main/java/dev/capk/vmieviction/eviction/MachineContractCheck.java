package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.EventReasons.Told;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.GuestAccessException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.event.Level;

/**
 * Reads Cluster API's contract for a VMI's machine ({@link ManagementObjects}), decides what it
 * means for this step ({@link MachineContract}) and says so in events: a deadline moved earlier, a
 * contract that could not be read and a Cluster being deleted are told once per evacuation of a
 * VMI, a paused Cluster on every step (as a series). Within a run the contract's deadline only
 * moves earlier, even when the Machine's timeout is raised or the grace time removed mid-drain.
 */
final class MachineContractCheck {

  /**
   * The contract applied to one step: what to do, by when, and which setting said so; with the
   * Cluster's evacuation limit and live-migration annotations from the same read, raw, for the
   * admit and migrate steps.
   */
  record Applied(
      MachineContract.Step step,
      Deadline deadline,
      Optional<String> origin,
      Optional<String> evacuationLimit,
      Optional<String> liveMigration) {}

  /** A deadline a contract set, and the setting that set it. */
  private record Earliest(Instant at, String origin) {
    Earliest earlier(Earliest other) {
      return other.at.isBefore(at) ? other : this;
    }
  }

  private final ManagementObjects objects;

  /**
   * The earliest deadline a contract set per evacuation ({@code uid/start}): a later evacuation of
   * the same VMI starts afresh.
   */
  private final Cache<String, Earliest> earliest =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  /** {@code uid/start/entry} of what is told once per evacuation of a VMI. */
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
    MachineContract contract = MachineContract.decide(facts, start, c.settings.drainTimeout());
    String evacuation = vmi.getMetadata().getUid() + "/" + start;
    if (!contract.unavailable().isEmpty()) {
      String what = String.join("; ", contract.unavailable());
      once(evacuation, Told.CONTRACT_UNAVAILABLE, vmi, key, what);
    }
    contract
        .deadline()
        .ifPresent(
            at ->
                earliest
                    .asMap()
                    .merge(
                        evacuation,
                        new Earliest(at, contract.deadlineOrigin()),
                        Earliest::earlier));
    Earliest earlier = earliest.getIfPresent(evacuation);
    Optional<String> origin = Optional.empty();
    if (earlier != null && earlier.at().isBefore(deadline.at())) {
      deadline = Deadline.at(earlier.at(), c.clock);
      origin = Optional.of(earlier.origin());
      String shortened = DrainStartTime.format(earlier.at());
      once(evacuation, Told.SHORTENED, vmi, key, shortened, earlier.origin());
    }
    String at = DrainStartTime.format(deadline.at());
    Optional<MachineContract.ClusterFacts> cluster = facts.clusterFacts();
    Optional<Instant> deleting = cluster.flatMap(MachineContract.ClusterFacts::deleting);
    if (deleting.isPresent()) {
      // Nothing changes for a Cluster being deleted (its workloads keep their budgets until the
      // VM is gone, the deadline bounds the wait): the admin learns why the tenant's VMIs go.
      String since = DrainStartTime.format(deleting.get());
      once(evacuation, Told.DELETING, vmi, key, facts.cluster(), since, at);
    }
    // A paused Cluster on every step (as a series), a Machine excluded from draining once.
    if (contract.step() == MachineContract.Step.HOLD_PAUSED) {
      Told.PAUSED.to(c.events, Level.INFO, vmi, key, facts.cluster(), at);
    } else if (contract.step() == MachineContract.Step.SKIP_DRAIN) {
      String machine = facts.machine().map(MachineContract.MachineFacts::name).orElse("");
      once(evacuation, Told.DRAIN_EXCLUDED, vmi, key, machine);
    }
    return new Applied(
        contract.step(),
        deadline,
        origin,
        cluster.flatMap(MachineContract.ClusterFacts::evacuationLimit),
        cluster.flatMap(MachineContract.ClusterFacts::liveMigration));
  }

  /** Tells {@code entry} once per evacuation of a VMI. */
  private void once(String evacuation, Told entry, VirtualMachineInstance vmi, Object... args) {
    if (told.asMap().putIfAbsent(evacuation + "/" + entry, Boolean.TRUE) == null) {
      entry.to(c.events, vmi, args);
    }
  }

  /**
   * What Cluster API's own settings for a machine say about the evacuation of its VMI: a paused
   * Cluster holds the guest untouched until the deadline (paused wins: Cluster API does nothing at
   * all to a paused Cluster's machines), a Machine excluded from draining is deleted at once, and
   * the Machine's drain timeout or the KubevirtMachine's grace time may move the deadline earlier,
   * never later. What could not be read applies nothing and is named in {@link #unavailable}. Pure.
   *
   * @param deadline the earliest deadline these settings set, if earlier than start + the global
   *     drain timeout
   * @param deadlineOrigin which setting set {@code deadline}, for messages (empty without one)
   * @param unavailable what could not be read or used, each a sentence part
   */
  public record MachineContract(
      Step step, Optional<Instant> deadline, String deadlineOrigin, List<String> unavailable) {

    public MachineContract {
      unavailable = List.copyOf(unavailable);
    }

    public enum Step {
      DRAIN,
      /** No write to the guest; look again later, delete at the deadline. */
      HOLD_PAUSED,
      /** Delete the VMI now, the guest untouched. */
      SKIP_DRAIN
    }

    /**
     * @param evacuationLimit its {@code capk.cluster.x-k8s.io/max-concurrent-evacuations}
     *     annotation, raw (for {@link TenantAdmission})
     * @param deleting its {@code metadata.deletionTimestamp}: told, not decided, here
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

    /** CAPK's grace time annotation, raw. */
    public record KubevirtMachineFacts(String name, Optional<String> graceTime) {}

    /**
     * @param nodeDrainTimeout v1beta1's {@code spec.nodeDrainTimeout}, raw
     * @param nodeDrainTimeoutSeconds v1beta2's {@code spec.deletion.nodeDrainTimeoutSeconds}
     */
    public record MachineFacts(
        String name,
        boolean drainExcluded,
        Optional<String> nodeDrainTimeout,
        Optional<Long> nodeDrainTimeoutSeconds) {}

    /**
     * What the reader found; an object absent when it could not be read (not found, not allowed),
     * the reason in {@code unavailable}. A transient failure is never a Facts: it is retried.
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

    public static MachineContract decide(Facts facts, Instant start, Duration drainTimeout) {
      List<String> unavailable = new ArrayList<>(facts.unavailable());
      Step step =
          facts.clusterFacts().map(ClusterFacts::paused).orElse(false)
              ? Step.HOLD_PAUSED
              : facts.machine().map(MachineFacts::drainExcluded).orElse(false)
                  ? Step.SKIP_DRAIN
                  : Step.DRAIN;
      Instant global = start.plus(drainTimeout);
      Instant earliest = global;
      String origin = "";
      Optional<MachineFacts> m = facts.machine();
      // Zero means "no limit" in Cluster API: the global timeout applies.
      Optional<Duration> timeout =
          m.flatMap(f -> machineDrainTimeout(f, unavailable)).filter(t -> !t.isZero());
      if (timeout.isPresent() && start.plus(timeout.get()).isBefore(earliest)) {
        earliest = start.plus(timeout.get());
        origin =
            "Machine "
                + m.get().name()
                + " node drain timeout "
                + GoDuration.format(timeout.get())
                + " from start "
                + DrainStartTime.format(start);
      }
      Optional<KubevirtMachineFacts> k = facts.kubevirtMachine();
      Optional<String> raw = k.flatMap(KubevirtMachineFacts::graceTime);
      if (raw.isPresent()) {
        String name = "KubevirtMachine " + k.get().name();
        String annotation = " annotation " + EvictionAnnotations.CAPK_DELETION_GRACE_TIME;
        Optional<Instant> grace = DrainStartTime.parseRfc3339(raw.get());
        if (grace.isEmpty()) {
          unavailable.add(
              name + annotation + " " + quoted(raw.get()) + " is not an RFC 3339 time: ignored");
        } else if (grace.get().isBefore(earliest)) {
          earliest = grace.get();
          origin = name + annotation;
        }
      }
      return new MachineContract(
          step,
          earliest.isBefore(global) ? Optional.of(earliest) : Optional.empty(),
          origin,
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
      } else if (m.nodeDrainTimeout().isPresent()) {
        try {
          return Optional.of(GoDuration.parse(m.nodeDrainTimeout().get()));
        } catch (IllegalArgumentException e) {
          unavailable.add(
              "Machine "
                  + m.name()
                  + " spec.nodeDrainTimeout "
                  + quoted(m.nodeDrainTimeout().get())
                  + " is not a duration: ignored");
        }
      }
      return Optional.empty();
    }

    private static String quoted(String raw) {
      return "\"" + VmiEvictionReconciler.shorten(raw) + "\"";
    }
  }
}
