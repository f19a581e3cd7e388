package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capi.Machine;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import dev.capk.vmieviction.eviction.VmiEvents.Told;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.time.GoDuration;
import dev.capk.vmieviction.workload.CachedObjects;
import dev.capk.vmieviction.workload.GuestAccessException;
import dev.capk.vmieviction.workload.GuestClusterRef;
import dev.capk.vmieviction.workload.ManagementApis;
import dev.capk.vmieviction.workload.TenantMapping;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.event.Level;

/**
 * Reads Cluster API's contract for a VMI's machine (its Cluster, its KubevirtMachine, named by the
 * VMI's {@code capk.cluster.x-k8s.io/kubevirt-machine-name} label, and the Machine owning that:
 * from the informer caches when they hold them, else with one GET each, in the namespace the {@link
 * TenantMapping} lets the VMI reach, so that a VMI label never leads to another tenant's objects),
 * decides what it means for this step ({@link MachineContract}) and says so in events: a deadline
 * moved earlier, a contract that could not be read and a Cluster being deleted are told once per
 * evacuation of a VMI, a paused Cluster on every step (as a series). Within a run the contract's
 * deadline only moves earlier, even when the Machine's timeout is raised or the grace time removed
 * mid-drain.
 */
public class MachineContractCheck {

  /**
   * What to do, by when, which setting said so; the evacuation limit and live-migration policy in
   * force (the Cluster's annotation when valid, else the flag's) for the admit and migrate steps.
   */
  record Applied(
      MachineContract.Step step,
      Deadline deadline,
      Optional<String> origin,
      EvacuationLimit evacuationLimit,
      LiveMigrationPolicy liveMigration) {}

  private record Earliest(Instant at, String origin) {}

  public record Cached(
      CachedObjects<Cluster> clusters,
      CachedObjects<KubevirtMachine> kubevirtMachines,
      CachedObjects<Machine> machines) {}

  private final TenantMapping namespaces;
  private final Source<Cluster> clusters;
  private final Source<KubevirtMachine> kubevirtMachines;
  private final Source<Machine> machines;

  /**
   * The earliest deadline a contract set per evacuation ({@code uid/start}): a later evacuation of
   * the same VMI starts afresh.
   */
  private final Cache<String, Earliest> earliest =
      CacheBuilder.newBuilder().maximumSize(100_000).build();

  public MachineContractCheck(
      ApiClient infra, String clusterApiVersion, TenantMapping namespaces, Cached cached) {
    this.namespaces = namespaces;
    this.clusters =
        new Source<>(
            "Cluster", cached.clusters(), ManagementApis.clusters(infra, clusterApiVersion));
    this.kubevirtMachines =
        new Source<>(
            "KubevirtMachine", cached.kubevirtMachines(), ManagementApis.kubevirtMachines(infra));
    this.machines =
        new Source<>(
            "Machine", cached.machines(), ManagementApis.machines(infra, clusterApiVersion));
  }

  /**
   * @param deadline the deadline from the drain start, the global timeout and the VMI's own grace
   *     time: the returned one is never later
   * @throws GuestAccessException when the objects could not be read: retry, apply nothing
   */
  Applied apply(
      StepContext c, String key, VirtualMachineInstance vmi, Instant start, Deadline deadline)
      throws GuestAccessException {
    MachineContract.Facts facts = read(vmi);
    MachineContract contract = MachineContract.decide(facts, start, c.settings.drainTimeout());
    String evacuation = vmi.getMetadata().getUid() + "/" + start;
    if (!contract.unavailable().isEmpty()) {
      String what = String.join("; ", contract.unavailable());
      once(c, evacuation, Told.CONTRACT_UNAVAILABLE, vmi, key, what);
    }
    if (contract.deadline().isPresent()) {
      Earliest set = new Earliest(contract.deadline().get(), contract.deadlineOrigin());
      earliest
          .asMap()
          .merge(evacuation, set, (was, now) -> now.at().isBefore(was.at()) ? now : was);
    }
    Earliest earlier = earliest.getIfPresent(evacuation);
    Optional<String> origin = Optional.empty();
    if (earlier != null && earlier.at().isBefore(deadline.at())) {
      deadline = Deadline.at(earlier.at(), c.clock);
      origin = Optional.of(earlier.origin());
      String shortened = DrainStartTime.format(earlier.at());
      once(c, evacuation, Told.SHORTENED, vmi, key, shortened, earlier.origin());
    }
    String at = DrainStartTime.format(deadline.at());
    Optional<OffsetDateTime> deleting =
        facts.clusterObject().map(Cluster::getMetadata).map(V1ObjectMeta::getDeletionTimestamp);
    if (deleting.isPresent()) {
      // Nothing changes for a Cluster being deleted (its workloads keep their budgets until the
      // VM is gone, the deadline bounds the wait): the admin learns why the tenant's VMIs go.
      String since = DrainStartTime.format(deleting.get().toInstant());
      once(c, evacuation, Told.DELETING, vmi, key, facts.cluster(), since, at);
    }
    if (contract.step() == MachineContract.Step.HOLD_PAUSED) {
      Told.PAUSED.to(c.events, Level.INFO, vmi, key, facts.cluster(), at);
    } else if (contract.step() == MachineContract.Step.SKIP_DRAIN) {
      String machine = facts.machine().map(MachineContract::name).orElse("");
      once(c, evacuation, Told.DRAIN_EXCLUDED, vmi, key, machine);
    }
    // An invalid annotation is told once per evacuation, annotation and value; the flag applies.
    Optional<String> rawLimit =
        facts.clusterAnnotation(ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION);
    Optional<EvacuationLimit> limit = rawLimit.flatMap(EvacuationLimit::parse);
    EvacuationLimit flagLimit = c.settings.maxConcurrentEvacuationsPerCluster();
    if (rawLimit.isPresent() && limit.isEmpty()) {
      String used = flagLimit + (flagLimit.unlimited() ? " (unlimited)" : "");
      once(c, evacuation + "/" + rawLimit.get(), Told.LIMIT_INVALID, vmi, key, cut(rawLimit), used);
    }
    Optional<String> rawPolicy = facts.clusterAnnotation(ClusterApi.LIVE_MIGRATION_ANNOTATION);
    Optional<LiveMigrationPolicy> policy = rawPolicy.flatMap(LiveMigrationPolicy::parse);
    LiveMigrationPolicy flagPolicy = c.settings.liveMigration();
    if (rawPolicy.isPresent() && policy.isEmpty()) {
      String told = evacuation + "/" + rawPolicy.get();
      once(c, told, Told.POLICY_INVALID, vmi, key, cut(rawPolicy), flagPolicy.value);
    }
    return new Applied(
        contract.step(), deadline, origin, limit.orElse(flagLimit), policy.orElse(flagPolicy));
  }

  private static String cut(Optional<String> raw) {
    return VmiEvictionReconciler.shorten(raw.get());
  }

  /**
   * What can be read now: an object that does not exist or may not be read (404, 403) is absent,
   * its reason in the facts. That is an answer; a transient failure ({@code InfraAPIError}) or a
   * VMI that may not reach its Cluster ({@code MissingClusterLabel}, {@code
   * ClusterNamespaceRefused}) is thrown, to be retried.
   */
  MachineContract.Facts read(VirtualMachineInstance vmi) throws GuestAccessException {
    GuestClusterRef ref = namespaces.clusterOf(vmi);
    String ns = ref.namespace();
    List<String> unavailable = new ArrayList<>();
    Optional<Cluster> cluster = clusters.get(ns, ref.name(), unavailable);
    String kvmName = LenientJson.label(vmi, CapkLabels.KUBEVIRT_MACHINE_NAME);
    Optional<KubevirtMachine> kvm = Optional.empty();
    if (kvmName == null || kvmName.isBlank()) {
      unavailable.add("the VMI has no label " + CapkLabels.KUBEVIRT_MACHINE_NAME);
    } else {
      kvm = kubevirtMachines.get(ns, kvmName, unavailable);
    }
    // The Cluster API Machine among the owners (CAPI sets it on its infra machines).
    Optional<String> owner =
        kvm.map(KubevirtMachine::getMetadata).map(V1ObjectMeta::getOwnerReferences).stream()
            .flatMap(List::stream)
            .filter(o -> ClusterApi.MACHINE_KIND.equals(o.getKind()))
            .filter(o -> String.valueOf(o.getApiVersion()).startsWith(ClusterApi.GROUP + "/"))
            .map(o -> o.getName())
            .findFirst();
    if (kvm.isPresent() && owner.isEmpty()) {
      unavailable.add("KubevirtMachine " + ns + "/" + kvmName + " has no owner Machine");
    }
    Optional<Machine> machine = Optional.empty();
    if (owner.isPresent()) {
      machine = machines.get(ns, owner.get(), unavailable);
    }
    return new MachineContract.Facts(ref.toString(), cluster, kvm, machine, unavailable);
  }

  /** One kind: its informer cache, else one GET. */
  private record Source<T extends KubernetesObject>(
      String kind, CachedObjects<T> cache, GenericKubernetesApi<T, ?> api) {

    /** The cached object, else one GET; a 404 or 403 is named in {@code unavailable}. */
    Optional<T> get(String ns, String name, List<String> unavailable) throws GuestAccessException {
      Optional<T> hit = cache.find(ns, name);
      if (hit.isPresent()) {
        return hit;
      }
      String what = kind + " " + ns + "/" + name;
      KubernetesApiResponse<T> r;
      try {
        r = api.get(ns, name);
      } catch (IllegalStateException e) { // GenericKubernetesApi's way of saying "I/O failure"
        throw new GuestAccessException(
            GuestAccessException.Reason.InfraAPIError, "reading " + what + " failed: no response");
      }
      int code = r.getHttpStatusCode();
      if (code >= 200 && code < 300 && r.getObject() != null) {
        return Optional.of(r.getObject());
      }
      if (code == 404 || code == 403) {
        unavailable.add(
            code == 404
                ? what + " not found"
                : "not allowed to read " + what + " (the controller's RBAC)");
        return Optional.empty();
      }
      throw new GuestAccessException(
          GuestAccessException.Reason.InfraAPIError, "reading " + what + " failed: HTTP " + code);
    }
  }

  private void once(
      StepContext c, String evacuation, Told entry, VirtualMachineInstance vmi, Object... args) {
    if (c.changed(evacuation + "/" + entry, true)) {
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

    private static final String EXCLUDED = ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION;

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
     * What {@link #read} found of the VMI's Cluster ({@code cluster} names it), its KubevirtMachine
     * and the Machine owning that.
     */
    public record Facts(
        String cluster,
        Optional<Cluster> clusterObject,
        Optional<KubevirtMachine> kubevirtMachine,
        Optional<Machine> machine,
        List<String> unavailable) {
      public Facts {
        unavailable = List.copyOf(unavailable);
      }

      /** A Cluster annotation (the evacuation limit, the live-migration policy), raw. */
      Optional<String> clusterAnnotation(String key) {
        return clusterObject.map(c -> LenientJson.annotation(c, key));
      }
    }

    public static MachineContract decide(Facts facts, Instant start, Duration drainTimeout) {
      List<String> unavailable = new ArrayList<>(facts.unavailable());
      Step step =
          facts.clusterObject().filter(MachineContract::paused).isPresent()
              ? Step.HOLD_PAUSED
              : facts.machine().filter(m -> LenientJson.annotation(m, EXCLUDED) != null).isPresent()
                  ? Step.SKIP_DRAIN
                  : Step.DRAIN;
      Instant global = start.plus(drainTimeout);
      Instant earliest = global;
      String origin = "";
      Optional<Machine> m = facts.machine();
      // Zero means "no limit" in Cluster API: the global timeout applies.
      Optional<Duration> timeout =
          m.flatMap(f -> machineDrainTimeout(f, unavailable)).filter(t -> !t.isZero());
      if (timeout.isPresent() && start.plus(timeout.get()).isBefore(earliest)) {
        earliest = start.plus(timeout.get());
        origin =
            "Machine "
                + name(m.get())
                + " node drain timeout "
                + GoDuration.format(timeout.get())
                + " from start "
                + DrainStartTime.format(start);
      }
      Optional<KubevirtMachine> k = facts.kubevirtMachine();
      Optional<String> raw =
          k.map(kvm -> LenientJson.annotation(kvm, EvictionAnnotations.CAPK_DELETION_GRACE_TIME));
      if (raw.isPresent()) {
        String name = "KubevirtMachine " + name(k.get());
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
    private static Optional<Duration> machineDrainTimeout(Machine m, List<String> unavailable) {
      Machine.Spec spec = m.getSpec() == null ? new Machine.Spec() : m.getSpec();
      Long seconds =
          spec.getDeletion() == null ? null : spec.getDeletion().getNodeDrainTimeoutSeconds();
      String timeout = spec.getNodeDrainTimeout();
      String field = "Machine " + name(m) + " spec.";
      if (seconds != null && seconds >= 0) {
        return Optional.of(Duration.ofSeconds(seconds));
      } else if (seconds != null) {
        unavailable.add(
            field + "deletion.nodeDrainTimeoutSeconds " + seconds + " is negative: ignored");
      } else if (timeout != null) {
        try {
          return Optional.of(GoDuration.parse(timeout));
        } catch (IllegalArgumentException e) {
          unavailable.add(
              field + "nodeDrainTimeout " + quoted(timeout) + " is not a duration: ignored");
        }
      }
      return Optional.empty();
    }

    static boolean paused(Cluster c) {
      return (c.getSpec() != null && Boolean.TRUE.equals(c.getSpec().getPaused()))
          || LenientJson.annotation(c, ClusterApi.PAUSED_ANNOTATION) != null;
    }

    static String name(KubernetesObject o) {
      return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
    }

    private static String quoted(String raw) {
      return "\"" + VmiEvictionReconciler.shorten(raw) + "\"";
    }
  }
}
