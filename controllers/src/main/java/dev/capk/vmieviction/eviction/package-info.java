/**
 * The VMI eviction controller: {@link dev.capk.vmieviction.eviction.VmiEvictionReconciler} picks
 * the step for a VMI, {@link dev.capk.vmieviction.eviction.Evacuator} and {@link
 * dev.capk.vmieviction.eviction.GuestNodeUncordoner} carry it out, and the pure decisions beside
 * them ({@code Eligibility}, {@code DrainStartDecision}, {@code EvacuationDeadline}, {@code
 * UncordonDecision}, {@code GuestNodeMatch}) are tested as tables. May import {@code api}, {@code
 * drain}, {@code events}, {@code kube}, {@code logging}, {@code time} and {@code workload}; never
 * {@code manager} or {@code maintenance}.
 */
package dev.capk.vmieviction.eviction;
