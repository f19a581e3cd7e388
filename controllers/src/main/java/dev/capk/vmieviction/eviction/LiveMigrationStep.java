package dev.capk.vmieviction.eviction;

import com.google.common.hash.Hashing;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigrationList;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceStatus;
import dev.capk.vmieviction.eviction.ClusterDefaults.Readout;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.Evacuator.StepOutcome;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import dev.capk.vmieviction.eviction.MigrationDecision.MigrationAttempt;
import dev.capk.vmieviction.eviction.MigrationDecision.MigrationLimits;
import dev.capk.vmieviction.eviction.VmiEvents.Told;
import dev.capk.vmieviction.eviction.VmiEvictionReconciler.Eligibility;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.time.Deadline;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.CreateOptions;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The migrate step: with live migration preferred, moves a {@code LiveMigratable} VMI off the
 * drained infra node with a VirtualMachineInstanceMigration, and falls back to the guest drain when
 * it is not migratable, its attempts failed, or it is not done by the deadline minus the reserve.
 * {@link MigrationDecision} decides; this class reads the facts (our migrations from one
 * label-selected list, KubeVirt's limits from the cached KubeVirt CR), writes what must survive a
 * restart on the VMI (the attempt, the fallback) before acting, and tells events and metrics.
 */
final class LiveMigrationStep {

  private static final Logger log = LoggerFactory.getLogger(LiveMigrationStep.class);

  private final GenericKubernetesApi<
          VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationList>
      migrations;
  private final ClusterDefaults kubevirt;

  /** Counting the running migrations and creating one is one act in this process. */
  private final Object startLock = new Object();

  /** What the VMIs waiting for a free migration slot wait for: woken when a migration ends. */
  private static final String SLOT = "a live migration slot";

  private final StepContext c;

  LiveMigrationStep(
      StepContext c,
      GenericKubernetesApi<VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationList>
          migrations,
      ClusterDefaults kubevirt) {
    this.c = c;
    this.migrations = migrations;
    this.kubevirt = kubevirt;
  }

  private List<VirtualMachineInstanceMigration> ours() throws ApiException {
    ListOptions options = new ListOptions();
    options.setLabelSelector(EvictionAnnotations.MIGRATION_OWNED_LABEL);
    VirtualMachineInstanceMigrationList list =
        InfraVmis.call(() -> migrations.list(options)).throwsApiException().getObject();
    return list == null || list.getItems() == null ? List.of() : list.getItems();
  }

  /** False when it existed already (a restart or another replica got there). */
  private boolean create(Migrating m, String name) throws ApiException {
    String vmi = m.vmi().getMetadata().getName();
    VirtualMachineInstanceMigration migration =
        new VirtualMachineInstanceMigration()
            .metadata(
                new V1ObjectMeta()
                    .name(name)
                    .namespace(m.vmi().getMetadata().getNamespace())
                    .labels(Map.of(EvictionAnnotations.MIGRATION_OWNED_LABEL, "true"))
                    .annotations(
                        m.infraNode() == null
                            ? Map.of()
                            : Map.of(EvictionAnnotations.MIGRATION_SOURCE_NODE, m.infraNode())))
            .spec(new VirtualMachineInstanceMigration.Spec().vmiName(vmi));
    CreateOptions options = new CreateOptions();
    options.setFieldManager(InfraVmis.FIELD_MANAGER);
    KubernetesApiResponse<VirtualMachineInstanceMigration> r =
        InfraVmis.call(() -> migrations.create(migration, options));
    if (r.getHttpStatusCode() == 409) {
      return false; // AlreadyExists: the deterministic name says it is this very attempt
    }
    r.throwsApiException();
    return true;
  }

  private void delete(String namespace, String name) throws ApiException {
    KubernetesApiResponse<VirtualMachineInstanceMigration> r =
        InfraVmis.call(() -> migrations.delete(namespace, name));
    if (r.getHttpStatusCode() != 404) {
      r.throwsApiException();
    }
  }

  /** {@code number}: the attempt recorded (0: none), {@code current} its migration's name. */
  private record Migrating(
      String key,
      VirtualMachineInstance vmi,
      String startText,
      LiveMigrationPolicy policy,
      int number,
      String current,
      String infraNode,
      Instant cutoff,
      Readout<MigrationLimits> limits) {}

  /**
   * @throws ApiException when the infra API could not be read or written: retry
   */
  StepOutcome step(
      String key,
      VirtualMachineInstance vmi,
      Instant start,
      Deadline deadline,
      LiveMigrationPolicy policy)
      throws ApiException {
    String startText = DrainStartTime.format(start);
    boolean fellBack =
        startText.equals(LenientJson.annotation(vmi, EvictionAnnotations.MIGRATION_FALLBACK));
    Optional<MigrationAttempt> attempt =
        MigrationAttempt.parse(LenientJson.annotation(vmi, EvictionAnnotations.MIGRATION_ATTEMPT))
            .filter(a -> a.drainStart().equals(startText));
    if (attempt.isEmpty() && (fellBack || policy == LiveMigrationPolicy.NEVER)) {
      return new StepOutcome.Proceed(vmi); // the cheap path: no request
    }
    String ns = vmi.getMetadata().getNamespace();
    int number = attempt.map(MigrationAttempt::number).orElse(0);
    String current = number == 0 ? null : name(vmi, startText, number);
    List<VirtualMachineInstanceMigration> ours = ours();
    if (fellBack) {
      // Restart-safe cancel: the fallback was recorded before the delete, so a migration of ours
      // still running here is deleted now.
      if (currentOf(ours, ns, current).filter(m -> !m.finished()).isPresent()) {
        delete(ns, current);
      }
      return new StepOutcome.Proceed(vmi);
    }
    Migrating m =
        new Migrating(
            key,
            vmi,
            startText,
            policy,
            number,
            current,
            Eligibility.evacuationNodeName(vmi),
            deadline.at().minus(c.settings.drainReserve()),
            kubevirt.migrationLimits());
    MigrationDecision.Step next = decide(m, ours);
    Duration look = Duration.between(c.clock.instant(), m.cutoff());
    look = look.compareTo(c.settings.retryInterval()) < 0 ? look : c.settings.retryInterval();
    look = look.compareTo(Duration.ofMillis(100)) < 0 ? Duration.ofMillis(100) : look;
    if (m.limits() instanceof Readout.Unreadable<MigrationLimits> u
        && (next instanceof MigrationDecision.Start
            || next instanceof MigrationDecision.WaitForSlot)) {
      return limitsUnreadable(m, u.what(), look);
    }
    return switch (next) {
      // KubeVirt clears evacuationNodeName next (virt-handler's migration ACK): the VMI then
      // leaves this step through callOff, which tells MigrationSucceeded.
      case MigrationDecision.Succeeded _ -> stop(c.settings.retryInterval());
      case MigrationDecision.Follow _ -> stop(look);
      case MigrationDecision.WaitForSlot w -> waitForSlot(key, w, look);
      case MigrationDecision.Start first -> {
        if (first.afterFailure()) {
          failed(key, vmi, number, "trying again (attempt " + first.number() + ")");
        }
        yield start(m, look);
      }
      case MigrationDecision.FallBack b -> fallBack(m, b, deadline);
    };
  }

  private static StepOutcome stop(Duration retry) {
    return new StepOutcome.Wait(
        EvacuationPhase.Migrating, "live migration under way or waiting for a slot", retry);
  }

  /** Starts the next attempt, unless another worker took the free slot meanwhile. */
  private StepOutcome start(Migrating m, Duration look) throws ApiException {
    synchronized (startLock) {
      // Counted again under the lock, from a fresh list (a consistent read, which sees the
      // creates of the workers before this one): workers starting at once must not all take
      // the same free slot.
      MigrationDecision.Step again = decide(m, ours());
      if (again instanceof MigrationDecision.WaitForSlot w) {
        return waitForSlot(m.key(), w, look);
      }
      if (!(again instanceof MigrationDecision.Start s)) {
        return stop(Duration.ofMillis(100)); // the facts moved: decide afresh
      }
      // Recorded before the create: a restart finds the attempt and follows its migration.
      VirtualMachineInstance recorded =
          c.vmis.annotate(
              m.vmi(),
              EvictionAnnotations.MIGRATION_ATTEMPT,
              MigrationAttempt.format(m.startText(), s.number(), c.clock.instant()));
      String name = name(m.vmi(), m.startText(), s.number());
      if (!create(m, name)) {
        return stop(look); // created before (a restart, a replica): told then
      }
      String cutoff = DrainStartTime.format(m.cutoff());
      int of = c.settings.migrationAttempts();
      Told.MIGRATING.to(c.events, recorded, m.key(), name, s.number(), m.infraNode(), of, cutoff);
      return stop(look);
    }
  }

  private StepOutcome fallBack(Migrating m, MigrationDecision.FallBack b, Deadline deadline)
      throws ApiException {
    if (b.failedAttempt()) {
      failed(m.key(), m.vmi(), m.number(), "falling back to the drain");
    }
    // The fallback first, the cancel after it: a restart in between still cancels.
    VirtualMachineInstance recorded =
        c.vmis.annotate(m.vmi(), EvictionAnnotations.MIGRATION_FALLBACK, m.startText());
    if (b.cancel()) {
      delete(m.vmi().getMetadata().getNamespace(), m.current());
      c.waitOver(SLOT, null);
      c.metrics.migrationEnded(EvictionMetrics.MigrationResult.CANCELLED);
      log.info("live migration cancelled vmi={} migration={}", m.key(), m.current());
    }
    String cancelled = b.cancel() ? "; migration " + m.current() + " cancelled" : "";
    Told.FALLBACK.to(
        c.events, recorded, m.key(), b.why(), cancelled, DrainStartTime.format(deadline.at()));
    return new StepOutcome.Proceed(recorded);
  }

  /**
   * KubeVirt cleared the evacuation mark: a migration of ours that succeeded is told once, and the
   * attempt annotation removed; @return the VMI as that left it
   */
  VirtualMachineInstance succeeded(String key, VirtualMachineInstance vmi) throws ApiException {
    String raw = LenientJson.annotation(vmi, EvictionAnnotations.MIGRATION_ATTEMPT);
    if (raw == null) {
      return vmi;
    }
    VirtualMachineInstanceStatus status = vmi.getStatus();
    boolean migrated =
        status != null
            && status.getMigrationState() != null
            && status.getMigrationState().completed()
            && !status.getMigrationState().failed();
    VirtualMachineInstance cleared =
        c.vmis.annotate(vmi, EvictionAnnotations.MIGRATION_ATTEMPT, null);
    c.waitOver(SLOT, null);
    if (migrated) {
      c.metrics.migrationSucceeded(
          MigrationAttempt.parse(raw)
              .map(a -> Duration.between(a.began(), c.clock.instant()))
              .orElse(Duration.ZERO));
      Told.MIGRATED.to(c.events, cleared, key, status.getNodeName());
    }
    return cleared;
  }

  private void failed(String key, VirtualMachineInstance vmi, int number, String then) {
    c.waitOver(SLOT, null);
    c.metrics.migrationEnded(EvictionMetrics.MigrationResult.FAILED);
    Told.ATTEMPT_FAILED.to(c.events, vmi, key, number, then);
  }

  private MigrationDecision.Step decide(Migrating m, List<VirtualMachineInstanceMigration> ours) {
    List<VirtualMachineInstanceMigration> running =
        ours.stream().filter(g -> !g.finished()).toList();
    String source = EvictionAnnotations.MIGRATION_SOURCE_NODE;
    long fromNode =
        running.stream()
            .filter(g -> m.infraNode() != null)
            .filter(g -> m.infraNode().equals(LenientJson.annotation(g, source)))
            .count();
    VirtualMachineInstanceStatus status = m.vmi().getStatus();
    return MigrationDecision.decide(
        new MigrationDecision.Facts(
            m.policy(),
            status != null
                && status.conditionTrue(VirtualMachineInstanceStatus.CONDITION_LIVE_MIGRATABLE),
            m.number(),
            currentOf(ours, m.vmi().getMetadata().getNamespace(), m.current())
                .map(g -> g.phase() == null ? "" : g.phase()),
            c.settings.migrationAttempts(),
            c.clock.instant(),
            m.cutoff(),
            running.size(),
            (int) fromNode,
            // Unreadable limits hold back Start and WaitForSlot (step), the only steps they decide.
            m.limits() instanceof Readout.Answer<MigrationLimits> a
                ? a.value()
                : MigrationLimits.KUBEVIRT_DEFAULTS));
  }

  /**
   * KubeVirt's limits could not be read: no migration is started on a guess (KubeVirt's defaults
   * may allow more than the cluster runs at once); the step looks again, and at the cutoff the
   * guest drain follows, which needs no limits.
   */
  private StepOutcome limitsUnreadable(Migrating m, String what, Duration look) {
    String told = m.vmi().getMetadata().getUid() + "/" + m.startText() + "/limits";
    Level level = c.changed(told, true) ? Level.WARN : Level.DEBUG;
    String cutoff = DrainStartTime.format(m.cutoff());
    Told.LIMITS_UNREADABLE.to(c.events, level, m.vmi(), m.key(), what, cutoff);
    return stop(look);
  }

  private static Optional<VirtualMachineInstanceMigration> currentOf(
      List<VirtualMachineInstanceMigration> ours, String namespace, String current) {
    return ours.stream()
        .filter(m -> current != null && current.equals(m.getMetadata().getName()))
        .filter(m -> namespace.equals(m.getMetadata().getNamespace()))
        .findFirst();
  }

  /** Waits its turn: woken when one of our migrations ends, else looks again after {@code look}. */
  private StepOutcome waitForSlot(String key, MigrationDecision.WaitForSlot w, Duration look) {
    if (c.waitFor(SLOT, key)) {
      log.info("live migration waits for a slot vmi={} waitsFor=\"{}\"", key, w.waitsFor());
    }
    return stop(look);
  }

  /**
   * The migration's name for one attempt of one evacuation: the VMI's name, cut to fit, and a hash
   * of its UID and drain start, then the attempt. Deterministic, so a restarted controller or a
   * second replica finds the same name (and a create of it answers AlreadyExists); at most 63
   * characters.
   */
  static String name(VirtualMachineInstance vmi, String drainStart, int attempt) {
    String hash =
        Hashing.sha256()
            .hashString(vmi.getMetadata().getUid() + "/" + drainStart, StandardCharsets.UTF_8)
            .toString()
            .substring(0, 10);
    String suffix = "-" + hash + "-" + attempt;
    String prefix = "evac-" + vmi.getMetadata().getName();
    prefix = prefix.substring(0, Math.min(prefix.length(), 63 - suffix.length()));
    return prefix.replaceAll("[-.]+$", "") + suffix;
  }
}
