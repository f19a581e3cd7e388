/**
 * Guest cluster clients: from a VMI's Cluster ({@link dev.capk.vmieviction.workload.TenantMapping})
 * and its kubeconfig Secret, checked as untrusted input, to a cached {@link
 * dev.capk.vmieviction.workload.GuestClient} whose every request has a total time bound, a retry, a
 * circuit breaker and its tenant's throttle ({@link dev.capk.vmieviction.workload.GuestClients}).
 * May import {@code api}, {@code kube} and {@code time}.
 */
package dev.capk.vmieviction.workload;
