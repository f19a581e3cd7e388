package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import java.time.Duration;

/** What a step of an evacuation came to: the next step goes on, or the evacuation waits. */
sealed interface StepOutcome {

  /** Go on to the next step with {@code vmi} as this step left it. */
  record Proceed(VirtualMachineInstance vmi) implements StepOutcome {}

  /**
   * The evacuation waits in {@code phase} for what {@code blocker} names (said in the deadline
   * warning if it lasts): look again after {@code retry}, never past the deadline.
   */
  record Wait(EvacuationPhase phase, String blocker, Duration retry) implements StepOutcome {}
}
