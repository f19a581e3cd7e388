/**
 * The VMI eviction controller: {@link dev.capk.vmieviction.eviction.VmiEvictionReconciler} picks
 * the step for a VMI, {@link dev.capk.vmieviction.eviction.Evacuator} carries an evacuation through
 * its steps (start and deadline, Cluster API contract, tenant admission, live migration, cordon,
 * drain step, delete), each step answering one sealed {@code StepOutcome} (proceed, wait, requeue
 * after, delete with an outcome, failed with a cause), records the evacuation's phase on the VMI,
 * and uncordons afterwards. {@link dev.capk.vmieviction.eviction.GuestClusters} is the guest side:
 * it connects a VMI to its guest cluster and keeps each cluster's node and budget watches and each
 * drain's pod watch. The pure decisions are nested in the step they serve ({@code
 * VmiEvictionReconciler.Eligibility}, {@code Evacuator.DrainStartTime}, {@code
 * Evacuator.EvacuationDeadline}, {@code TenantAdmission.decide}, {@code
 * MachineContractCheck.MachineContract}, {@code Evacuator.UncordonDecision}, {@code
 * Guest.GuestNodeMatch}), or stand alone ({@code MigrationDecision}), and are tested as tables. May
 * import {@code api}, {@code drain}, {@code events}, {@code kube}, {@code logging}, {@code time}
 * and {@code workload}; never {@code manager} or {@code maintenance}.
 */
package dev.capk.vmieviction.eviction;
