package dev.capk.vmieviction.status;

import dev.capk.vmieviction.api.EvacuationPhase;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * One evacuation in progress, as the status command shows it.
 *
 * @param cluster the tenant Cluster (the VMI's {@code cluster.x-k8s.io/cluster-name} label), or
 *     empty
 * @param role the VMI's {@code cluster.x-k8s.io/role} label, or empty
 * @param guestNode the guest node the controller cordoned or drained, as its events name it; empty
 *     before it touched one
 * @param infraNode the infra node being drained ({@code status.evacuationNodeName})
 * @param drainStart the recorded drain start; empty in phase {@link EvacuationPhase#Pending}
 * @param deadline when the VMI is deleted whatever the drain state (see {@link DeadlineEstimate})
 * @param blockedBy the most recent event that says what it waits for
 */
public record EvacuationStatus(
    String namespace,
    String name,
    String uid,
    String cluster,
    String role,
    Optional<String> guestNode,
    String infraNode,
    EvacuationPhase phase,
    Optional<Instant> drainStart,
    Optional<DeadlineEstimate> deadline,
    Optional<Duration> timeLeft,
    Optional<VmiEvent> blockedBy) {}
