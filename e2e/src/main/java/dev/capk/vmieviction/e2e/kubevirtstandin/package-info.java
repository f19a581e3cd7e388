/**
 * A KubeVirt STAND-IN for tests and the demo. KubeVirt itself cannot run here (it needs
 * virtualization), so this reproduces only what KubeVirt does through the Kubernetes API and
 * nothing more: the pods/eviction admission webhook that turns the eviction of an External (or
 * LiveMigrate) VMI's virt-launcher pod into {@code status.evacuationNodeName} and an HTTP 429, a
 * live migration that moves a LiveMigrate VMI's launcher pod to another node, the phases and status
 * changes of a VirtualMachineInstanceMigration someone creates ({@code MigrationObjects}), and the
 * VirtualMachine controller that recreates a deleted VMI (new UID) with a new virt-launcher pod. It
 * is not KubeVirt and never claims to be.
 */
package dev.capk.vmieviction.e2e.kubevirtstandin;
