package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.util.concurrent.TimeUnit;

/**
 * What this process knows about the cordon marks it puts on guest nodes, so that the uncordon
 * checks of Running VMIs spend no guest request on a VMI known to have no mark, and read the node
 * of a VMI this process cordoned without the cluster's list of marks (which a guest identity that
 * may not list nodes cannot have). The marks of a cluster's other nodes come from its node watch
 * ({@link Guest#markedNodes}).
 */
final class CordonMarks {

  /** VMI UIDs whose guest node is known to carry no mark of ours: no guest call needed. */
  private final Cache<String, Boolean> unmarked =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterWrite(6, TimeUnit.HOURS).build();

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
}
