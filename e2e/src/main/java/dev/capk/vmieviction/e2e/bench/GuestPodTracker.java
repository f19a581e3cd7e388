package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Watches one namespace's pods in each guest cluster (one watch per guest) and notes, per guest
 * node, when each of its pods was seen gone: the receipt of the pod's DELETED event by this JVM, in
 * {@link System#nanoTime()}, the clock {@link VmiTracker} uses too. An eviction only starts a
 * graceful deletion; kwok completes it, and the DELETED event is the pod leaving the API server.
 */
final class GuestPodTracker implements AutoCloseable {
  /** Guest node name, then pod UID, then when its DELETED event arrived. */
  private final Map<String, Map<String, Long>> goneAt = new ConcurrentHashMap<>();

  private final List<AutoCloseable> watches = new ArrayList<>();
  private final AtomicInteger resumes = new AtomicInteger();

  GuestPodTracker(List<RawKube> guests, String namespace) throws Exception {
    try {
      for (RawKube guest : guests) {
        watches.add(
            guest.watchResuming(
                "/api/v1/namespaces/" + namespace + "/pods",
                this::event,
                resumes::incrementAndGet));
      }
    } catch (Exception e) {
      close();
      throw e;
    }
  }

  private void event(String type, JsonObject pod, long at) {
    if (!"DELETED".equals(type)) {
      return;
    }
    String uid = RawKube.str(pod, "metadata", "uid");
    String node = RawKube.str(pod, "spec", "nodeName");
    if (uid != null && node != null) {
      goneAt.computeIfAbsent(node, n -> new ConcurrentHashMap<>()).putIfAbsent(uid, at);
    }
  }

  /**
   * When the last of the {@code pods} pods the node held was seen gone, or empty while fewer than
   * that many were seen gone.
   */
  Optional<Long> lastPodGoneNanos(String node, int pods) {
    Map<String, Long> gone = goneAt.getOrDefault(node, Map.of());
    if (gone.size() < pods) {
      return Optional.empty();
    }
    return gone.values().stream().max(Long::compare);
  }

  /**
   * How often an API server ended a watch and it was resumed (a resume after a 410 relists, and
   * pods deleted in between are then missed).
   */
  int resumes() {
    return resumes.get();
  }

  @Override
  public void close() throws Exception {
    for (AutoCloseable w : watches) {
      w.close();
    }
  }
}
