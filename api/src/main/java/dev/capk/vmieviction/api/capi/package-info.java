/**
 * Partial models of Cluster API's {@code cluster.x-k8s.io} Cluster and Machine, the annotations we
 * read on them, and the names of a Cluster's kubeconfig Secret. No logic; imports nothing of this
 * project.
 */
package dev.capk.vmieviction.api.capi;
