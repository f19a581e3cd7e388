package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonObject;
import dev.capk.vmieviction.api.EvictionAnnotations;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Watches every VMI of the infra cluster and notes, per UID, when {@code status.evacuationNodeName}
 * was first seen set and when the VMI was first seen being deleted (nanoTime, and wall clock to
 * compare with a deadline); also the drain start annotation last seen before the deletion.
 */
final class VmiTracker implements AutoCloseable {
  private final Map<String, Long> evacuationSetAt = new ConcurrentHashMap<>();
  private final Map<String, Long> deletedAt = new ConcurrentHashMap<>();
  private final Map<String, Instant> deletedWallClock = new ConcurrentHashMap<>();
  private final Map<String, String> drainStart = new ConcurrentHashMap<>();
  private final AtomicInteger resumes = new AtomicInteger();
  private final AutoCloseable watch;

  VmiTracker(RawKube infra) throws Exception {
    watch =
        infra.watchResuming(
            "/apis/kubevirt.io/v1/virtualmachineinstances", this::event, resumes::incrementAndGet);
  }

  /** How often the API server ended the watch and it was resumed. */
  int resumes() {
    return resumes.get();
  }

  private void event(String type, JsonObject vmi, long at) {
    String uid = RawKube.str(vmi, "metadata", "uid");
    if (uid == null) {
      return;
    }
    String evac = RawKube.str(vmi, "status", "evacuationNodeName");
    if (evac != null && !evac.isBlank()) {
      evacuationSetAt.putIfAbsent(uid, at);
    }
    String start =
        RawKube.str(vmi, "metadata", "annotations", EvictionAnnotations.DRAIN_START_TIME);
    if (start != null && !deletedAt.containsKey(uid)) {
      drainStart.put(uid, start);
    }
    if ("DELETED".equals(type) || RawKube.str(vmi, "metadata", "deletionTimestamp") != null) {
      deletedAt.putIfAbsent(uid, at);
      deletedWallClock.putIfAbsent(uid, Instant.now());
    }
  }

  /** Seconds from evacuationNodeName set to deletion, or null when either was not seen. */
  Double evacuationSeconds(String uid) {
    Long a = evacuationSetAt.get(uid);
    Long b = deletedAt.get(uid);
    return a == null || b == null ? null : (b - a) / 1e9;
  }

  Optional<Long> deletedNanos(String uid) {
    return Optional.ofNullable(deletedAt.get(uid));
  }

  boolean deleted(String uid) {
    return deletedAt.containsKey(uid);
  }

  Optional<Instant> deletedAt(String uid) {
    return Optional.ofNullable(deletedWallClock.get(uid));
  }

  Optional<String> drainStart(String uid) {
    return Optional.ofNullable(drainStart.get(uid));
  }

  @Override
  public void close() throws Exception {
    watch.close();
  }
}
