/**
 * NodeMaintenance ({@code nodemaintenance.medik8s.io/v1beta1}): declarative infra node maintenance,
 * API-compatible with the Node Maintenance Operator, served in the same manager as the VMI eviction
 * controller (flag {@code --enable-node-maintenance}).
 *
 * <p>Entry point: {@link dev.capk.vmieviction.maintenance.NodeMaintenanceController} (informers,
 * queue, workers, events, and the drains under way), run by the manager's controller runtime. The
 * reconciler ({@link dev.capk.vmieviction.maintenance.NodeMaintenanceReconciler}) admits a
 * maintenance ({@link dev.capk.vmieviction.maintenance.Admission}: the node exists, one maintenance
 * per node), taints and cordons the node recording what it changed ({@link
 * dev.capk.vmieviction.maintenance.NodePatches}: JSON Patches of the drain engine's cordon helper's
 * ops, guarded by tests of what they depend on), drains it with the drain engine one short step per
 * reconcile (a watch on the node's pods wakes the next step) while progress goes to the status
 * ({@link dev.capk.vmieviction.maintenance.MaintenanceStatus}), and on deletion restores exactly
 * what it changed.
 *
 * <p>May import {@code api}, {@code drain}, {@code events}, {@code kube}, {@code logging}, {@code
 * runtime} and {@code time}; never {@code drain.cli}.
 */
package dev.capk.vmieviction.maintenance;
