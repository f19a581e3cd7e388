/**
 * Partial model of CAPK's (Cluster API Provider KubeVirt) {@code infrastructure.cluster.x-k8s.io}
 * KubevirtMachine and KubevirtCluster, as far as the controller reads them. No logic; may import
 * only {@code api}.
 */
package dev.capk.vmieviction.api.capk;
