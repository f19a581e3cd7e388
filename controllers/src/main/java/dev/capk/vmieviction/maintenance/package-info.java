/**
 * NodeMaintenance ({@code nodemaintenance.medik8s.io/v1beta1}), API-compatible with the Node
 * Maintenance Operator, in the same manager (flag {@code --enable-node-maintenance}). {@link
 * dev.capk.vmieviction.maintenance.NodeMaintenanceController} (informers, queue, drains under way)
 * runs {@link dev.capk.vmieviction.maintenance.NodeMaintenanceReconciler}: it admits a maintenance
 * ({@link dev.capk.vmieviction.maintenance.Admission}), taints and cordons the node recording what
 * it changed ({@link dev.capk.vmieviction.maintenance.NodePatches}, of the drain engine's cordon
 * ops), drains it one short step per reconcile, progress in the status ({@link
 * dev.capk.vmieviction.maintenance.MaintenanceStatus}), and on deletion restores what it changed.
 *
 * <p>May import {@code api}, {@code drain}, {@code events}, {@code kube}, {@code logging}, {@code
 * runtime} and {@code time}; never {@code drain.cli}.
 */
package dev.capk.vmieviction.maintenance;
