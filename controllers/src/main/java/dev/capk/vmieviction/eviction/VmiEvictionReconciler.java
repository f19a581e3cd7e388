package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.EvictionStrategy;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigrationList;
import dev.capk.vmieviction.eviction.ClusterDefaults.Readout;
import dev.capk.vmieviction.eviction.VmiEvents.Told;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import io.kubernetes.client.extended.controller.reconciler.Reconciler;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.event.Level;

/**
 * Evacuates VMIs with eviction strategy External: when KubeVirt sets {@code
 * status.evacuationNodeName}, drain the guest node inside the VMI, then delete the VMI (anyway at
 * the deadline); once it runs again, uncordon the guest node. Level-triggered: all state that
 * matters lives in the API. This class decides which step applies ({@link Eligibility}) and hands
 * it on; a marked VMI left to KubeVirt, or whose strategy cannot be read yet, it tells about.
 */
public final class VmiEvictionReconciler implements Reconciler {

  static final Result DONE = new Result(false);

  /** How far in the future a recorded drain start may be before it counts as malformed. */
  static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(1);

  /** After a 409 (the object changed under us), look again almost at once. */
  static final Duration CONFLICT_RETRY = Duration.ofMillis(500);

  /** What the VMIs that set no strategy wait for while the KubeVirt CR cannot be read. */
  private static final String KUBEVIRT_CR = "the KubeVirt CR";

  private final ClusterDefaults clusterDefaults;
  private final Evacuator evacuator;
  final StepContext c;
  private final Function<VirtualMachineInstance, Optional<String>> refusal;

  /**
   * @param migrations the infra cluster's API where the live migrations of {@code
   *     --live-migration=prefer} are created
   * @param wake enqueues a VMI (by {@code namespace/name}) for a look now: a VMI held by the admit
   *     step is woken when what holds it ends
   * @param refusal why a VMI is not ours at all (its labels claim a tenant the management objects
   *     do not bind to where it runs: {@code TenantMapping.refusal}), else empty; a refused VMI is
   *     never annotated, drained or deleted, not even at a deadline
   */
  public VmiEvictionReconciler(
      InfraVmis vmis,
      ClusterDefaults clusterDefaults,
      GuestClusters guests,
      MachineContractCheck contracts,
      GenericKubernetesApi<VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationList>
          migrations,
      VmiEvents events,
      EvictionMetrics metrics,
      EvictionSettings settings,
      Clock clock,
      Consumer<String> wake,
      Function<VirtualMachineInstance, Optional<String>> refusal) {
    this.refusal = refusal;
    this.clusterDefaults = clusterDefaults;
    this.c = new StepContext(vmis, guests, events, metrics, settings, clock, wake);
    this.evacuator =
        new Evacuator(
            c,
            contracts,
            new TenantAdmission(c),
            new LiveMigrationStep(c, migrations, clusterDefaults));
  }

  /**
   * {@code next} (feeding the work queue), after recording when each VMI's evacuation mark was
   * first seen ({@link StepContext#seen}): a drain starts then, not when a worker gets to the VMI.
   */
  public ResourceEventHandler<VirtualMachineInstance> markSightings(
      ResourceEventHandler<VirtualMachineInstance> next) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(VirtualMachineInstance vmi) {
        c.seen(vmi);
        next.onAdd(vmi);
      }

      @Override
      public void onUpdate(VirtualMachineInstance old, VirtualMachineInstance vmi) {
        c.seen(vmi);
        next.onUpdate(old, vmi);
      }

      @Override
      public void onDelete(VirtualMachineInstance vmi, boolean finalStateUnknown) {
        c.gone(vmi);
        next.onDelete(vmi, finalStateUnknown);
      }
    };
  }

  /** This reconciler's evacuations no longer count in the shared gauges (its pipeline stopped). */
  public void stopped() {
    c.metrics.forget(c);
  }

  @Override
  public Result reconcile(Request request) {
    long began = System.nanoTime();
    try {
      return step(request);
    } finally {
      c.metrics.reconciled(Duration.ofNanos(System.nanoTime() - began));
    }
  }

  private Result step(Request request) {
    String key = request.getNamespace() + "/" + request.getName();
    Optional<VirtualMachineInstance> found = c.vmis.get(request.getNamespace(), request.getName());
    if (found.isEmpty()) {
      return forget(key, false); // deleted, by us or anyone
    }
    VirtualMachineInstance vmi = found.get();
    Optional<String> refused = refusal.apply(vmi);
    if (refused.isPresent()) {
      // Checked before anything else, the deadline included: a VMI that is not ours is never
      // touched. An evacuation under way stops here too (its binding went away).
      forget(key, false);
      if (Eligibility.evacuationRequested(vmi)) {
        Told.CLUSTER_MISMATCH.to(c.events, vmi, key, refused.get());
      }
      return DONE;
    }
    String vmiStrategy = vmi.getSpec() == null ? null : vmi.getSpec().getEvictionStrategy();
    Optional<String> clusterDefault = Optional.empty();
    // The KubeVirt CR's strategy decides only for a VMI that names none and is not being deleted
    // (what is done with a VMI being deleted does not depend on it): a failed read holds no other.
    if (vmi.getMetadata().getDeletionTimestamp() == null && Eligibility.isBlank(vmiStrategy)) {
      Readout<Optional<String>> read = clusterDefaults.evictionStrategy();
      if (read instanceof Readout.Unreadable<Optional<String>> unreadable) {
        // Neither evacuated nor left to KubeVirt: whether it is ours is not known. Told once per
        // wait, not per retry; woken as soon as a read answers.
        Level level = c.waitFor(KUBEVIRT_CR, key) ? Level.WARN : Level.DEBUG;
        if (Eligibility.evacuationRequested(vmi)) {
          Told.CONFIG_UNREADABLE.to(c.events, level, vmi, key, unreadable.what());
        }
        return new Result(true, c.backoff(key));
      }
      // Every VMI waiting for the read looks again now, with its backoff reset.
      c.waitOver(KUBEVIRT_CR, key).forEach(c::succeeded);
      clusterDefault = ((Readout.Answer<Optional<String>>) read).value();
    }
    Optional<String> set = Eligibility.effectiveStrategy(vmiStrategy, clusterDefault);
    String strategy = set.orElse(c.settings.fallbackStrategy());
    return switch (Eligibility.of(vmi, strategy)) {
      case EVACUATE -> evacuator.evacuate(key, vmi);
      case NOT_EVACUATING -> {
        // Under this name runs a VMI not being evacuated: often the recreation of one whose
        // admission held others (its deletion may not have reached us as a look of its own).
        c.admissionEnded(key);
        yield evacuator.callOff(key, vmi);
      }
      case NOT_EXTERNAL -> {
        leftToKubeVirt(key, vmi, strategy, set.isEmpty());
        // The earliest start is kept: flipping the strategy away and back buys no later deadline.
        yield forget(key, true);
      }
      case DELETING -> {
        // An admitted VMI being deleted counts against its Cluster until it is gone: its held
        // peers are woken then, not now.
        evacuator.ended(key, false);
        yield DONE;
      }
    };
  }

  /**
   * Tells why a marked VMI is left to KubeVirt: its strategy is unknown, or the fallback (once).
   */
  private void leftToKubeVirt(
      String key, VirtualMachineInstance vmi, String strategy, boolean fromFallback) {
    if (!Eligibility.evacuationRequested(vmi)) {
      return;
    }
    if (strategy != null && !Eligibility.KNOWN_STRATEGIES.contains(strategy)) {
      String known = String.join(", ", Eligibility.KNOWN_STRATEGIES);
      Told.STRATEGY_UNKNOWN.to(c.events, vmi, key, shorten(strategy), known);
    }
    String uid = vmi.getMetadata().getUid();
    if (fromFallback && uid != null && c.changed(uid + "/leftToKubeVirt", true)) {
      String infraNode = Eligibility.evacuationNodeName(vmi);
      Told.LEFT_TO_KUBEVIRT.to(c.events, vmi, key, strategy, infraNode);
    }
  }

  /** Hostile values are cut before they reach a log line or an event. */
  static String shorten(String raw) {
    return raw.length() > 64 ? raw.substring(0, 64) + "..." : raw;
  }

  /** The VMI is gone, not ours or left to KubeVirt: forget it (but, with keepStart, its start). */
  private Result forget(String key, boolean keepStart) {
    evacuator.ended(key, keepStart);
    c.admissionEnded(key);
    return DONE;
  }

  /** Whether this controller must evacuate a VMI now, if not why not, and its strategy. Pure. */
  public enum Eligibility {
    /** External strategy, evacuation requested, not being deleted: drain and delete. */
    EVACUATE,
    /** Already being deleted: nothing left for us to do. */
    DELETING,
    /** KubeVirt handles this VMI itself (migration, shutdown): never ours. */
    NOT_EXTERNAL,
    /** Nobody asked for this VMI to leave its infra node. */
    NOT_EVACUATING;

    public static Eligibility of(VirtualMachineInstance vmi, String effectiveStrategy) {
      if (vmi.getMetadata() != null && vmi.getMetadata().getDeletionTimestamp() != null) {
        return DELETING;
      }
      if (!EvictionStrategy.EXTERNAL.equals(effectiveStrategy)) {
        return NOT_EXTERNAL;
      }
      return evacuationRequested(vmi) ? EVACUATE : NOT_EVACUATING;
    }

    /** KubeVirt asked for this VMI to leave its infra node. */
    static boolean evacuationRequested(VirtualMachineInstance vmi) {
      String target = evacuationNodeName(vmi);
      return target != null && !target.isBlank();
    }

    static String evacuationNodeName(VirtualMachineInstance vmi) {
      return vmi.getStatus() == null ? null : vmi.getStatus().getEvacuationNodeName();
    }

    /**
     * The strategy KubeVirt applies: the VMI's own when set, else the cluster-wide default from the
     * KubeVirt CR when it could be read and is set; empty when neither says, so the operator-given
     * fallback decides.
     */
    public static Optional<String> effectiveStrategy(
        String vmiStrategy, Optional<String> clusterDefault) {
      return Stream.concat(Stream.ofNullable(vmiStrategy), clusterDefault.stream())
          .filter(s -> !isBlank(s))
          .map(String::trim)
          .findFirst();
    }

    /** The strategies KubeVirt accepts, case-sensitive as KubeVirt compares them. */
    public static final List<String> KNOWN_STRATEGIES =
        List.of(
            EvictionStrategy.NONE,
            EvictionStrategy.LIVE_MIGRATE,
            EvictionStrategy.LIVE_MIGRATE_IF_POSSIBLE,
            EvictionStrategy.EXTERNAL);

    static boolean isBlank(String s) {
      return s == null || s.isBlank();
    }
  }
}
