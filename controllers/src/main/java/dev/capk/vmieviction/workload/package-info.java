/**
 * Guest cluster clients: from a VMI's Cluster ({@link
 * dev.capk.vmieviction.workload.ClusterNamespacePolicy}) and its kubeconfig Secret, checked as
 * untrusted input ({@link dev.capk.vmieviction.workload.KubeconfigPolicy}), to a cached {@link
 * dev.capk.vmieviction.workload.GuestClient} whose every request has a total time bound, a retry
 * and a circuit breaker. May import {@code api}, {@code kube} and {@code time}.
 */
package dev.capk.vmieviction.workload;
