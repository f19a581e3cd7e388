package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.ClusterDefaults.Readout;
import io.kubernetes.client.extended.controller.reconciler.Reconciler;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evacuates VMIs with eviction strategy External: when KubeVirt sets {@code
 * status.evacuationNodeName}, drain the guest node running inside the VMI, then delete the VMI so
 * KubeVirt recreates it elsewhere; delete it anyway at the deadline; once it runs again, uncordon
 * the guest node. Level-triggered and idempotent: all state that matters (drain start, our cordon)
 * lives in the API. This class decides which step applies to a VMI ({@link Eligibility}) and hands
 * it to the class that carries it out.
 */
public final class VmiEvictionReconciler implements Reconciler {

  private static final Logger log = LoggerFactory.getLogger(VmiEvictionReconciler.class);

  static final Result DONE = new Result(false);

  /** How far in the future a recorded drain start may be before it counts as malformed. */
  static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(1);

  /** After a 409 (the object changed under us), look again almost at once. */
  static final Duration CONFLICT_RETRY = Duration.ofMillis(500);

  private final InfraVmis vmis;
  private final ClusterDefaults clusterDefaults;
  private final EvictionSettings settings;
  private final EvacuationMemory memory;
  private final Evacuator evacuator;
  private final GuestNodeUncordoner uncordoner;
  private final NotEvacuatedNotices notices;
  private final EvictionMetrics metrics;
  private final HeldEvacuations held;
  private final VmiEvents events;
  private final Function<VirtualMachineInstance, Optional<String>> refusal;
  private final MarkSightings sightings;

  /**
   * @param migrations where the live migrations of {@code --live-migration=prefer} are created
   * @param wake enqueues a VMI (by {@code namespace/name}) for a look now: a VMI held by the admit
   *     step is woken when what holds it ends
   * @param refusal why a VMI is not ours at all (its labels claim a tenant the management objects
   *     do not bind to where it runs: {@code TenantMapping.refusal}), else empty; a refused VMI is
   *     never annotated, drained or deleted, not even at a deadline
   */
  public VmiEvictionReconciler(
      InfraVmis vmis,
      ClusterDefaults clusterDefaults,
      GuestConnector guests,
      ManagementObjects managementObjects,
      LiveMigrations migrations,
      VmiEvents events,
      EvictionMetrics metrics,
      EvictionSettings settings,
      Clock clock,
      Consumer<String> wake,
      Function<VirtualMachineInstance, Optional<String>> refusal) {
    this.events = events;
    this.refusal = refusal;
    this.vmis = vmis;
    this.clusterDefaults = clusterDefaults;
    this.settings = settings;
    this.metrics = metrics;
    this.memory = new EvacuationMemory(metrics, settings.maxFailureBackoff(), clock);
    this.held = new HeldEvacuations(wake);
    CordonMarks marks = new CordonMarks();
    this.sightings = new MarkSightings(clock);
    MachineContractCheck contracts =
        new MachineContractCheck(managementObjects, events, settings.drainTimeout(), clock);
    this.evacuator =
        new Evacuator(
            vmis,
            guests,
            events,
            metrics,
            settings,
            clock,
            memory,
            marks,
            contracts,
            new TenantAdmissionCheck(vmis, guests, events, settings, clock, held),
            new LiveMigrationStep(
                vmis, migrations, clusterDefaults, events, metrics, settings, clock, wake),
            sightings);
    this.uncordoner =
        new GuestNodeUncordoner(guests, events, marks, memory, settings.retryInterval(), held);
    this.notices = new NotEvacuatedNotices(events, memory, wake);
  }

  /**
   * Where the VMI informer's events must pass before they reach the work queue ({@link
   * MarkSightings#before}): a drain starts when its mark was seen.
   */
  public MarkSightings markSightings() {
    return sightings;
  }

  /** This reconciler's evacuations no longer count in the shared gauges (its pipeline stopped). */
  public void stopped() {
    metrics.forget(memory);
  }

  @Override
  public Result reconcile(Request request) {
    long began = System.nanoTime();
    try {
      return step(request);
    } finally {
      metrics.reconciled(Duration.ofNanos(System.nanoTime() - began));
    }
  }

  private Result step(Request request) {
    String key = request.getNamespace() + "/" + request.getName();
    Optional<VirtualMachineInstance> found = vmis.get(request.getNamespace(), request.getName());
    if (found.isEmpty()) {
      memory.gone(key); // deleted, by us or anyone
      evacuator.ended(key);
      held.ended(key);
      notices.waitEnded(key);
      return DONE;
    }
    VirtualMachineInstance vmi = found.get();
    String uid = vmi.getMetadata().getUid();
    Optional<String> refused = refusal.apply(vmi);
    if (refused.isPresent()) {
      // Checked before anything else, the deadline included: a VMI that is not ours is never
      // touched. An evacuation under way stops here too (its binding went away).
      memory.gone(key);
      evacuator.ended(key);
      held.ended(key);
      notices.waitEnded(key);
      if (Eligibility.evacuationRequested(vmi)) {
        log.warn("vmi refused, left alone vmi={} reason=\"{}\"", key, refused.get());
        events.warning(vmi, EventReasons.INFRA_CLUSTER_MISMATCH, refused.get());
      }
      return DONE;
    }
    String vmiStrategy = vmi.getSpec() == null ? null : vmi.getSpec().getEvictionStrategy();
    Optional<String> clusterDefault = Optional.empty();
    if (needsClusterDefault(vmi, vmiStrategy)) {
      Readout<Optional<String>> read = clusterDefaults.evictionStrategy();
      if (read instanceof Readout.Unreadable<Optional<String>> unreadable) {
        return notices.waitFor(key, vmi, unreadable.what());
      }
      notices.answered(key);
      clusterDefault = ((Readout.Answer<Optional<String>>) read).value();
    }
    String strategy =
        Eligibility.effectiveStrategy(vmiStrategy, clusterDefault, settings.fallbackStrategy());
    switch (Eligibility.of(vmi, strategy)) {
      case EVACUATE:
        return evacuator.evacuate(key, vmi);
      case NOT_EVACUATING:
        // Under this name runs a VMI not being evacuated: often the recreation of one whose
        // admission held others (its deletion may not have reached us as a look of its own).
        held.ended(key);
        return evacuator.callOff(key, vmi).orElseGet(() -> uncordoner.check(key, vmi));
      case NOT_EXTERNAL:
        notices.leftToKubeVirt(
            key, vmi, strategy, Eligibility.isFallbackStrategy(vmiStrategy, clusterDefault));
        // The earliest start is kept: flipping the strategy away and back must not buy a later
        // deadline.
        memory.ended(key, uid, true);
        memory.succeeded(key);
        evacuator.ended(key);
        held.ended(key);
        return DONE;
      case DELETING:
      default:
        // An admitted VMI being deleted still counts against its Cluster until it is gone: its
        // held peers are woken then, not now.
        memory.ended(key, uid, false);
        memory.succeeded(key);
        evacuator.ended(key);
        return DONE;
    }
  }

  /**
   * The KubeVirt CR's strategy decides only for a VMI that names none and is not being deleted
   * (what is done with a VMI being deleted does not depend on its strategy): a failed read of the
   * CR must hold no other VMI.
   */
  private static boolean needsClusterDefault(VirtualMachineInstance vmi, String vmiStrategy) {
    boolean deleting =
        vmi.getMetadata() != null && vmi.getMetadata().getDeletionTimestamp() != null;
    return !deleting && (vmiStrategy == null || vmiStrategy.isBlank());
  }
}
