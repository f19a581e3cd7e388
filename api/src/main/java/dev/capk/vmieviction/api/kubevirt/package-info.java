/**
 * Partial models of KubeVirt's VirtualMachineInstance and KubeVirt CR, as far as the controller
 * reads them, and the eviction strategy names. No logic; may import only {@code api}.
 */
package dev.capk.vmieviction.api.kubevirt;
