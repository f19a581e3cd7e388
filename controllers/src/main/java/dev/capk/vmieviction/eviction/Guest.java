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
 * Node writes apply only while the node is as read (409 otherwise) and return it as they left it.
 */
public interface Guest {

  /**
   * Lets one reconcile step talk to this guest cluster (empty), or says how long to wait (the
   * cluster's request rate or steps at once are used up): never waits. A step that may finish a
   * drain ({@code finishing}: its guest node's pods left) is always admitted. An admitted step ends
   * with {@link #leaveStep}, which frees its slot and pays for the requests it sent.
   */
  Optional<Duration> tryEnterStep(boolean finishing);

  void leaveStep();

  /** {@code namespace/name} of the Cluster, for logs and events. */
  String cluster();

  /**
   * The guest Node running in the VMI: named like the VMI, else with providerID {@code
   * kubevirt://<vmi>}; from the cluster's node watch while it reaches the server, else read.
   */
  Optional<V1Node> findNode(String vmiName) throws GuestAccessException, ApiException;

  /** The nodes and our cordon marks, from the cluster's node watch (else a list of its own). */
  MarkedNodes markedNodes() throws GuestAccessException, ApiException;

  /** Cordons the node and marks it as cordoned by us for the VMI, in one patch. */
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
   * Removes our mark and, if the node is cordoned as read, uncordons it, in one patch (a cordon
   * made since it was read is never lifted).
   */
  V1Node unmark(V1Node node) throws GuestAccessException, ApiException;

  /** Best effort: an Event on the guest Node. Never throws. */
  void nodeEvent(V1Node node, boolean warning, String reason, String message);
}
