/**
 * External infra clusters (CAPK's {@code KubevirtCluster.spec.infraClusterSecretRef}): from the
 * management cluster's KubevirtClusters and their Secrets to the infra connections, the infra
 * namespaces watched through each and the tenant Clusters bound to each ({@link
 * dev.capk.vmieviction.infra.InfraBindings}), and the tenant mapping of a VMI seen there ({@link
 * dev.capk.vmieviction.infra.BoundTenants}). Pure: no I/O. May import {@code api} and {@code
 * workload}.
 */
package dev.capk.vmieviction.infra;
