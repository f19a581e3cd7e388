package dev.capk.vmieviction.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TwoLaneWorkQueueTest {

  final TwoLaneWorkQueue<String> queue = new TwoLaneWorkQueue<>("test");

  @AfterEach
  void shutDown() {
    queue.shutDown();
  }

  List<String> drain(int n) throws InterruptedException {
    List<String> got = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String item = queue.get();
      got.add(item);
      queue.done(item);
    }
    return got;
  }

  @Test
  void itemsAddedFirstAreHandedOutBeforeEveryOrdinaryOne() throws Exception {
    queue.add("retry-1");
    queue.add("retry-2");
    queue.addFirst("drained");

    assertEquals(List.of("drained", "retry-1", "retry-2"), drain(3));
  }

  @Test
  void anItemWaitingInTheOrdinaryLaneMovesAheadWhenAddedFirst() throws Exception {
    queue.add("a");
    queue.add("b");
    queue.addFirst("b");

    assertEquals(List.of("b", "a"), drain(2));
    assertEquals(0, queue.length(), "added twice, handed out once");
  }

  @Test
  void anItemAddedWhileAWorkerHasItComesBackOnceThatWorkerIsDone() throws Exception {
    queue.add("a");
    String item = queue.get();
    queue.addFirst("a");
    queue.add("b");
    assertEquals(1, queue.length(), "not handed to a second worker meanwhile");

    queue.done(item);

    assertEquals(List.of("a", "b"), drain(2), "back in the lane it was added to");
  }

  @Test
  void aDelayedAddKeepsOnlyTheEarliestTime() throws Exception {
    queue.addAfter("a", Duration.ofMinutes(10));
    queue.addAfter("a", Duration.ofMillis(50));
    queue.addAfter("a", Duration.ofMinutes(5));

    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertEquals("a", queue.get()));
  }

  @Test
  void getReturnsNullOnceShutDown() throws Exception {
    queue.shutDown();
    assertNull(queue.get());
  }
}
