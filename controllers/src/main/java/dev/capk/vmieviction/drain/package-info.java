/**
 * The drain engine: {@code kubectl drain} semantics, from Java, faster than kubectl. It knows
 * nothing about VMIs. The eviction controller and the NodeMaintenance controller advance drains by
 * non-blocking steps ({@link dev.capk.vmieviction.drain.DrainStepper}, {@link
 * dev.capk.vmieviction.drain.SteppedDrains}); the {@code drain} CLI ({@link
 * dev.capk.vmieviction.drain.cli.DrainCommand}) runs the blocking drain below.
 *
 * <p>The CLI's entry point: {@link dev.capk.vmieviction.drain.NodeDrainer} ({@code cordon}, {@code
 * uncordon}, {@code drain}) with {@link dev.capk.vmieviction.drain.DrainOptions}. A drain cordons
 * the node, lists its pods ({@link dev.capk.vmieviction.drain.PodLister}, paginated), gives each a
 * {@link dev.capk.vmieviction.drain.PodVerdict} through {@link
 * dev.capk.vmieviction.drain.PodFilters} in kubectl's order ({@link
 * dev.capk.vmieviction.drain.DrainPlanner}), refuses as a whole ({@link
 * dev.capk.vmieviction.drain.DrainRefusedException}) or evicts concurrently ({@link
 * dev.capk.vmieviction.drain.PodEvictionTask}, {@link dev.capk.vmieviction.drain.Evictor}) while
 * one watch ({@link dev.capk.vmieviction.drain.DeletionWaiter}) reports pods leaving, and answers
 * with a {@link dev.capk.vmieviction.drain.DrainResult}. Per-pod progress goes to a {@link
 * dev.capk.vmieviction.drain.DrainProgressListener}.
 *
 * <p>Requests are built by the official client's API classes; answers are read leniently ({@link
 * dev.capk.vmieviction.kube.RawApi}) so a newer API server's extra fields cannot break a drain.
 *
 * <p>May import only {@code kube} and {@code time}.
 */
package dev.capk.vmieviction.drain;
