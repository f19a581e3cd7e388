/**
 * The drain engine: {@code kubectl drain} semantics, from Java, faster than kubectl. It knows
 * nothing about VMIs. Every drain is advanced by the non-blocking steps of {@link
 * dev.capk.vmieviction.drain.SteppedDrains}: the eviction and NodeMaintenance controllers' drains,
 * and the {@code drain} CLI's through the blocking loop of {@link
 * dev.capk.vmieviction.drain.NodeDrainer}; each plans the pods with {@link
 * dev.capk.vmieviction.drain.PodFilters}, and {@link dev.capk.vmieviction.drain.Cordoner}
 * (un)cordons for all three.
 *
 * <p>Requests are built by the official client's API classes; answers are read leniently ({@link
 * dev.capk.vmieviction.kube.RawApi}) so a newer API server's extra fields cannot break a drain.
 *
 * <p>May import only {@code kube} and {@code time}.
 */
package dev.capk.vmieviction.drain;
