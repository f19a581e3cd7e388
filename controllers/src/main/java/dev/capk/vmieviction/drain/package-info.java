/**
 * The drain engine: {@code kubectl drain} semantics, from Java, faster than kubectl. It knows
 * nothing about VMIs. Every drain is advanced by non-blocking steps ({@link
 * dev.capk.vmieviction.drain.DrainStepper}): the eviction controller's and the NodeMaintenance
 * controller's through {@link dev.capk.vmieviction.drain.SteppedDrains}, the {@code drain} CLI's
 * ({@link dev.capk.vmieviction.drain.cli.DrainCommand}) through the blocking loop below.
 *
 * <p>The CLI's: {@link dev.capk.vmieviction.drain.Cordoner} ({@code cordon}, {@code uncordon}) and
 * {@link dev.capk.vmieviction.drain.NodeDrainer} ({@code drain} of a cordoned node, with {@link
 * dev.capk.vmieviction.drain.DrainOptions}): it plans the node's pods with {@link
 * dev.capk.vmieviction.drain.PodFilters} in kubectl's order, refuses as a whole ({@link
 * dev.capk.vmieviction.drain.DrainRefusedException}) or steps the drain, writing kubectl.s lines to
 * a {@link dev.capk.vmieviction.drain.NodeDrainer.DrainOutput}.
 *
 * <p>Requests are built by the official client's API classes; answers are read leniently ({@link
 * dev.capk.vmieviction.kube.RawApi}) so a newer API server's extra fields cannot break a drain.
 *
 * <p>May import only {@code kube} and {@code time}.
 */
package dev.capk.vmieviction.drain;
