package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.eviction.TenantAdmission.HeldEvacuations;
import java.time.Clock;
import java.util.function.Consumer;

/**
 * What the steps of one reconciler's evacuations share: the infra VMIs, the guest clusters, the VMI
 * events, the metrics, the settings, the clock, what this process remembers of each evacuation, the
 * held VMIs, and how to wake a VMI (by {@code namespace/name}) for a look now.
 */
record StepContext(
    InfraVmis vmis,
    GuestConnector guests,
    VmiEvents events,
    EvictionMetrics metrics,
    EvictionSettings settings,
    Clock clock,
    EvacuationMemory memory,
    HeldEvacuations held,
    Consumer<String> wake) {}
