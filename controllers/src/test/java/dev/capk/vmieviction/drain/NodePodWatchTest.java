package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.SteppedDrains.NodePodWatch;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class NodePodWatchTest {

  final AtomicInteger wakes = new AtomicInteger();
  final NodePodWatch watch = new NodePodWatch(null, "n", wakes::incrementAndGet, null);

  static V1Pod pod(String name) {
    return new V1Pod().metadata(new V1ObjectMeta().namespace("ns").name(name).uid("uid-" + name));
  }

  @Test
  void nothingIsKnownBeforeTheFirstList() {
    assertEquals(Optional.empty(), watch.pods());
  }

  @Test
  void aFirstListWithPodsWakesNobodyTheirDeletionsDo() {
    watch.relisted(List.of(pod("a"), pod("b")));
    assertEquals(0, wakes.get(), "pods still there: nothing for the drain to do yet");
    assertEquals(2, watch.pods().orElseThrow().size());

    watch.seen("DELETED", pod("a"));
    watch.seen("DELETED", pod("b"));

    assertEquals(2, wakes.get());
    assertTrue(watch.pods().orElseThrow().isEmpty());
  }

  @Test
  void aFirstListOfAnEmptyNodeWakes() {
    watch.relisted(List.of());
    assertEquals(1, wakes.get(), "the pods left before the watch began");
  }

  @Test
  void aLaterListWakesOnlyWhenAPodKnownBeforeIsMissing() {
    watch.relisted(List.of(pod("a"), pod("b")));
    watch.relisted(List.of(pod("a"), pod("b"), pod("c")));
    assertEquals(0, wakes.get());

    watch.relisted(List.of(pod("a"), pod("c")));
    assertEquals(1, wakes.get());
  }

  @Test
  void aWatchThatGaveUpWakesAndKnowsNothingMore() {
    watch.relisted(List.of(pod("a")));
    watch.watchFailed("gone");
    assertEquals(1, wakes.get());
    assertEquals(Optional.empty(), watch.pods());
  }
}
