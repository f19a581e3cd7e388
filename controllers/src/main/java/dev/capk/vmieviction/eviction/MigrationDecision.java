package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.KubeVirt;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceMigration;
import dev.capk.vmieviction.eviction.Evacuator.DrainStartTime;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * The migrate step's decision, pure: given the policy, what KubeVirt says of the VMI, the attempt
 * recorded on it and that attempt's migration, the migrations running and the time, what comes
 * next. {@link LiveMigrationStep} gathers the facts and carries the answer out.
 */
final class MigrationDecision {
  private MigrationDecision() {}

  /**
   * @param attempt the attempt recorded for this evacuation, 0 when none
   * @param phase the phase of that attempt's migration; empty when it does not exist, "" when
   *     KubeVirt has not set one yet
   * @param cutoff the deadline minus the drain reserve: no migration runs past it
   * @param runningInCluster migrations not finished yet, in the whole infra cluster
   * @param runningFromNode of those, the ones leaving this VMI's infra node
   */
  record Facts(
      LiveMigrationPolicy policy,
      boolean liveMigratable,
      int attempt,
      Optional<String> phase,
      int maxAttempts,
      Instant now,
      Instant cutoff,
      int runningInCluster,
      int runningFromNode,
      MigrationLimits limits) {}

  sealed interface Step permits FallBack, Start, Follow, WaitForSlot, Succeeded {}

  /**
   * Record the fallback and go on to the guest drain; {@code cancel}: delete the attempt's
   * migration first, it may still be running. {@code failedAttempt}: the attempt's migration just
   * failed.
   */
  record FallBack(String why, boolean cancel, boolean failedAttempt) implements Step {}

  /** Create attempt {@code number}; {@code afterFailure}: the one before it failed. */
  record Start(int number, boolean afterFailure) implements Step {}

  /** The attempt's migration is under way: look again later (no later than the cutoff). */
  record Follow() implements Step {}

  /** KubeVirt's parallelism is used up: wait for a slot (no later than the cutoff). */
  record WaitForSlot(String waitsFor) implements Step {}

  /** The migration succeeded: KubeVirt now clears the evacuation mark; nothing to drain. */
  record Succeeded() implements Step {}

  static Step decide(Facts f) {
    boolean tooLate = !f.now().isBefore(f.cutoff());
    if (f.attempt() == 0) { // with the policy never, the step goes on to the drain first
      if (!f.liveMigratable()) {
        return new FallBack(
            "the VMI is not live-migratable (condition LiveMigratable)", false, false);
      }
      if (tooLate) {
        return new FallBack(
            "no migration started before the deadline minus the reserve", false, false);
      }
      return startIfFree(f, 1, false);
    }
    boolean exists = f.phase().isPresent();
    String phase = f.phase().orElse("");
    if (VirtualMachineInstanceMigration.PHASE_SUCCEEDED.equals(phase)) {
      return new Succeeded();
    }
    if (f.policy() == LiveMigrationPolicy.NEVER) {
      return new FallBack("the live-migration policy is now never", exists, false);
    }
    if (!exists || VirtualMachineInstanceMigration.PHASE_FAILED.equals(phase)) {
      // A migration that vanished (deleted by someone) counts as a failed attempt.
      String what = "live migration attempt " + f.attempt() + (exists ? " failed" : " was deleted");
      if (f.attempt() >= f.maxAttempts()) {
        return new FallBack(what + ", " + f.maxAttempts() + " attempt(s) allowed", false, exists);
      }
      if (tooLate) {
        return new FallBack(
            what + ", too late to try again before the deadline minus the reserve", false, exists);
      }
      return startIfFree(f, f.attempt() + 1, true);
    }
    if (tooLate) {
      return new FallBack(
          "live migration attempt "
              + f.attempt()
              + " not finished by the deadline minus the reserve",
          true,
          false);
    }
    return new Follow();
  }

  private static Step startIfFree(Facts f, int number, boolean afterFailure) {
    if (f.runningInCluster() >= f.limits().perCluster()) {
      return new WaitForSlot(
          f.runningInCluster()
              + " migration(s) running in the infra cluster, KubeVirt's limit is "
              + f.limits().perCluster());
    }
    if (f.runningFromNode() >= f.limits().outboundPerNode()) {
      return new WaitForSlot(
          f.runningFromNode()
              + " migration(s) leaving the infra node, KubeVirt's limit is "
              + f.limits().outboundPerNode());
    }
    return new Start(number, afterFailure);
  }

  /**
   * The live migration attempt recorded on a VMI ({@link EvictionAnnotations#MIGRATION_ATTEMPT}):
   * {@code <drain start>/<n>/<began>}, the drain start of its evacuation (an attempt of an earlier
   * one is no attempt of this one), the attempt from 1, and when it was recorded (for the
   * migration's duration).
   */
  record MigrationAttempt(String drainStart, int number, Instant began) {

    static String format(String drainStart, int number, Instant began) {
      return drainStart + "/" + number + "/" + DrainStartTime.format(began);
    }

    /** The attempt recorded, of whatever evacuation: callers compare its drain start. */
    static Optional<MigrationAttempt> parse(String raw) {
      String[] parts = raw == null ? new String[0] : raw.split("/");
      if (parts.length != 3) {
        return Optional.empty();
      }
      try {
        int n = Integer.parseInt(parts[1]);
        return n < 1
            ? Optional.empty()
            : Optional.of(new MigrationAttempt(parts[0], n, Instant.parse(parts[2])));
      } catch (NumberFormatException | DateTimeParseException e) {
        return Optional.empty();
      }
    }
  }

  /**
   * KubeVirt's live migration parallelism ({@code spec.configuration.migrations} of the KubeVirt
   * CR): we never create more migrations than KubeVirt would run at once.
   */
  public record MigrationLimits(int perCluster, int outboundPerNode) {

    /** KubeVirt's own defaults. */
    public static final MigrationLimits KUBEVIRT_DEFAULTS = new MigrationLimits(5, 2);

    /** The CR's values where set and positive, else KubeVirt's defaults. */
    public static MigrationLimits of(KubeVirt.Migrations m) {
      Integer perCluster = m == null ? null : m.getParallelMigrationsPerCluster();
      Integer outboundPerNode = m == null ? null : m.getParallelOutboundMigrationsPerNode();
      return new MigrationLimits(
          perCluster != null && perCluster > 0 ? perCluster : KUBEVIRT_DEFAULTS.perCluster,
          outboundPerNode != null && outboundPerNode > 0
              ? outboundPerNode
              : KUBEVIRT_DEFAULTS.outboundPerNode);
    }
  }
}
