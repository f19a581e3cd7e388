/**
 * Partial models of Cluster API's {@code cluster.x-k8s.io} Cluster, and the names of its kubeconfig
 * Secret. No logic; imports nothing of this project.
 */
package dev.capk.vmieviction.api.capi;
