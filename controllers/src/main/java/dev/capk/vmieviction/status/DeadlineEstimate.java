package dev.capk.vmieviction.status;

import java.time.Instant;

/**
 * The deadline the status command computes for an evacuation: the drain start plus the drain
 * timeout (the status command's {@code --drain-timeout}, which must match the controller's), moved
 * earlier by CAPK's {@code vmi-deletion-grace-time} annotation or by a {@code
 * DrainDeadlineShortened} event (Cluster API's nodeDrainTimeout or the KubevirtMachine's grace
 * time), exactly as the controller only ever moves a deadline earlier.
 *
 * @param source what set it, in words
 */
public record DeadlineEstimate(Instant at, String source) {}
