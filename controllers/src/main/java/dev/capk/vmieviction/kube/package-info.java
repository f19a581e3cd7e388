/**
 * What the official Kubernetes client lacks, in one place for the drain engine, the controllers and
 * the guest clients: reading answers leniently ({@link dev.capk.vmieviction.kube.LenientJson}),
 * sending requests the client builds but cannot send as we need them, bounded by a deadline ({@link
 * dev.capk.vmieviction.kube.RawApi}), and describing an API failure ({@link
 * dev.capk.vmieviction.kube.ApiStatus}).
 *
 * <p>May import only {@code time}.
 */
package dev.capk.vmieviction.kube;
