package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.eviction.GuestClusters.GuestNodeDrainer.DrainPass;
import dev.capk.vmieviction.eviction.GuestClusters.GuestNodeDrainer.MarkedNodes;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.time.Duration;
import java.util.Optional;

/**
 * The guest cluster of one VMI, as the reconciler uses it. Every call is bounded in time; an
 * unreachable or failing guest API shows as a {@link GuestAccessException} with a specific reason.
 */
public interface Guest {

  /**
   * Lets one reconcile step talk to this guest cluster, or says when to come back (the cluster's
   * request rate or steps at once are used up): never waits. A step woken because its guest node's
   * pods left ({@code finishing}: it may finish the drain now) is always admitted, its requests
   * paid for as any step's. An admitted step ends with {@link #leaveStep}.
   *
   * @return empty when admitted, else how long to wait
   */
  Optional<Duration> tryEnterStep(boolean finishing);

  /** The step is over: frees its slot and pays for the requests it sent. */
  void leaveStep();

  /** {@code namespace/name} of the Cluster, for logs and events. */
  String cluster();

  /**
   * The guest Node running in the VMI: named like the VMI, else with providerID {@code
   * kubevirt://<vmi>}; from the cluster's node watch while it reaches the server, else read.
   */
  Optional<V1Node> findNode(String vmiName) throws GuestAccessException, ApiException;

  /**
   * The nodes that carry our cordon mark now, from the cluster's node watch (started if none runs;
   * a list of its own while the watch has not listed or does not reach the server).
   */
  MarkedNodes markedNodes() throws GuestAccessException, ApiException;

  /**
   * Cordons the node and marks it as cordoned by us for the VMI, in one patch that applies only
   * while the node is still schedulable and unmarked as read (409 if someone changed that since).
   *
   * @return the node as the patch left it
   */
  V1Node cordonAndMark(V1Node node, String vmiUid) throws GuestAccessException, ApiException;

  /**
   * One step of the node's drain for the VMI {@code vmiKey}: evicts the pods that are due and
   * returns without waiting for them to leave (a watch on the node's pods wakes the VMI's next
   * step). Each eviction request ends within {@code requestTimeout}.
   */
  DrainPass drainStep(
      String vmiKey, String nodeName, Duration requestTimeout, boolean nodeUnreachable)
      throws GuestAccessException, ApiException;

  /**
   * Uncordons the node and removes our mark, in one patch that applies only while the node is still
   * cordoned with the mark it was read with (409 otherwise).
   *
   * @return the node as the patch left it
   */
  V1Node uncordonAndUnmark(V1Node node) throws GuestAccessException, ApiException;

  /**
   * Removes our mark only (the node is already schedulable), if it is still as read (409).
   *
   * @return the node as the patch left it
   */
  V1Node removeMark(V1Node node) throws GuestAccessException, ApiException;

  /** Best effort: an Event on the guest Node. Never throws. */
  void nodeEvent(V1Node node, boolean warning, String reason, String message);
}
