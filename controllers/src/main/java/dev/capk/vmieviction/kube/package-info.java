/**
 * What the official Kubernetes client lacks, in one place for the drain engine, the controllers and
 * the guest clients: reading answers and objects in every shape the API allows ({@link
 * dev.capk.vmieviction.kube.LenientJson}), and calling the API and saying what its answer means
 * ({@link dev.capk.vmieviction.kube.RawApi}: requests the client builds but cannot send as we need
 * them, bounded by a deadline; the one table of answers; describing an API failure); a kubeconfig's
 * client certificate read with the JDK alone ({@link
 * dev.capk.vmieviction.kube.ClientCertificates}); a resource's collection read as a streaming list
 * ({@link dev.capk.vmieviction.kube.WatchListApi}).
 *
 * <p>May import only {@code time}.
 */
package dev.capk.vmieviction.kube;
