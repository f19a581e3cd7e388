package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.capk.vmieviction.workload.GuestAccessException;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What this process knows about the cordon marks it puts on guest nodes, so that the uncordon
 * checks of Running VMIs (after a restart: every VMI) cost one node list per guest cluster, and
 * none for a VMI known to have no mark. Only this controller adds marks, and every mark it changes
 * goes through {@link #changing}, so a cached list is never missing a mark; lists expire to notice
 * marks removed by others.
 */
final class CordonMarks {

  /** A patch that adds or removes our mark; returns the node as it left it. */
  interface MarkChange {
    V1Node run() throws GuestAccessException, ApiException;
  }

  /** VMI UIDs whose guest node is known to carry no mark of ours: no guest call needed. */
  private final Cache<String, Boolean> unmarked =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterWrite(6, TimeUnit.HOURS).build();

  /** Per guest cluster, the nodes carrying our mark, read with one list. */
  private final Cache<String, MarkedNodes> markedByCluster =
      CacheBuilder.newBuilder().maximumSize(10_000).expireAfterWrite(30, TimeUnit.SECONDS).build();

  /**
   * Per guest cluster, how often our marks there changed: a list that raced a change is not kept.
   */
  private final Map<String, AtomicLong> changes = new ConcurrentHashMap<>();

  /**
   * Guest nodes (by cluster and VMI name) this process cordoned with its mark: their VMI's uncordon
   * check reads the node itself, without the cluster's list of marks.
   */
  private final Cache<String, Boolean> cordonedHere =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterWrite(6, TimeUnit.HOURS).build();

  /** This process cordoned the guest node of the VMI named {@code vmiName}, with its mark. */
  void cordonedHere(Guest guest, String vmiName) {
    cordonedHere.put(guest.cluster() + "/" + vmiName, Boolean.TRUE);
  }

  /**
   * Whether this process cordoned the node of the VMI named {@code vmiName} and has not undone it.
   */
  boolean knownCordonedHere(Guest guest, String vmiName) {
    return cordonedHere.getIfPresent(guest.cluster() + "/" + vmiName) != null;
  }

  /** The mark on the node of the VMI named {@code vmiName} is gone (or was never ours). */
  void notCordonedHere(Guest guest, String vmiName) {
    cordonedHere.invalidate(guest.cluster() + "/" + vmiName);
  }

  boolean knownUnmarked(String vmiUid) {
    return unmarked.getIfPresent(vmiUid) != null;
  }

  void noteUnmarked(String vmiUid) {
    unmarked.put(vmiUid, Boolean.TRUE);
  }

  /** This VMI's node is about to be cordoned: its uncordon check must look again. */
  void mayBeMarked(String vmiUid) {
    unmarked.invalidate(vmiUid);
  }

  /** The nodes of the guest cluster that carry our mark, from the shared list. */
  MarkedNodes markedNodes(Guest guest) throws GuestAccessException, ApiException {
    MarkedNodes known = markedByCluster.getIfPresent(guest.cluster());
    if (known == null) {
      AtomicLong counter = changes.computeIfAbsent(guest.cluster(), c -> new AtomicLong());
      long before = counter.get();
      known = guest.markedNodes();
      if (counter.get() == before) {
        markedByCluster.put(guest.cluster(), known);
      }
    }
    return known;
  }

  /**
   * Runs a patch that adds or removes our mark; lists of the cluster's marks taken meanwhile are
   * not kept.
   */
  V1Node changing(Guest guest, MarkChange change) throws GuestAccessException, ApiException {
    AtomicLong counter = changes.computeIfAbsent(guest.cluster(), c -> new AtomicLong());
    counter.incrementAndGet();
    markedByCluster.invalidate(guest.cluster());
    try {
      return change.run();
    } finally {
      counter.incrementAndGet();
      markedByCluster.invalidate(guest.cluster());
    }
  }
}
