package dev.capk.vmieviction.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TenantThrottleTest {

  final AtomicLong nanos = new AtomicLong();

  GuestClient.Throttle throttle(double qps, int burst, int maxInFlight) {
    return new GuestClient.Throttle(
        new GuestClient.Throttle.Limits(qps, burst, maxInFlight), nanos::get);
  }

  @Test
  void stepsBeyondTheBoundAtOnceAreToldToComeBackSoonAndAdmittedOnceOneLeaves() {
    GuestClient.Throttle t = throttle(100, 100, 2);
    assertEquals(Optional.empty(), t.tryEnter(false));
    assertEquals(Optional.empty(), t.tryEnter(false));

    assertEquals(Optional.of(GuestClient.Throttle.BUSY_RETRY), t.tryEnter(false));

    t.leave(1);
    assertEquals(Optional.empty(), t.tryEnter(false));
    assertEquals(Optional.of(GuestClient.Throttle.BUSY_RETRY), t.tryEnter(false), "two in flight");
  }

  @Test
  void aStepPaysForItsRequestsWhenItLeavesAndTheDebtIsWaitedOutAtTheRate() {
    GuestClient.Throttle t = throttle(10, 5, 4);
    assertEquals(Optional.empty(), t.tryEnter(false));
    // 1 token on entry, 14 more on leaving: 5 - 15 = -10 tokens.
    t.leave(15);

    Optional<Duration> wait = t.tryEnter(false);

    // 11 tokens short at 10 per second.
    assertEquals(Optional.of(Duration.ofMillis(1100)), wait);
    nanos.addAndGet(Duration.ofMillis(1100).toNanos());
    assertEquals(Optional.empty(), t.tryEnter(false));
  }

  @Test
  void theBurstIsTheMostAnIdleTenantSaves() {
    GuestClient.Throttle t = throttle(10, 3, 10);
    nanos.addAndGet(Duration.ofHours(1).toNanos());
    for (int i = 0; i < 3; i++) {
      assertEquals(Optional.empty(), t.tryEnter(false), "step " + i);
    }
    assertTrue(t.tryEnter(false).isPresent(), "the fourth step at once exceeds the burst");
  }

  @Test
  void aStepThatCanFinishADrainIsAlwaysLetInAndPaysLikeAnyOther() {
    GuestClient.Throttle t = throttle(10, 1, 1);
    assertEquals(Optional.empty(), t.tryEnter(false));
    assertTrue(t.tryEnter(false).isPresent(), "full: an ordinary step waits");

    assertEquals(Optional.empty(), t.tryEnter(true));

    t.leave(1);
    t.leave(1);
    assertEquals(
        Optional.of(Duration.ofMillis(200)), t.tryEnter(false), "its token was paid: in debt");
  }

  @Test
  void limitsMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new GuestClient.Throttle.Limits(0, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new GuestClient.Throttle.Limits(1, 0, 1));
    assertThrows(IllegalArgumentException.class, () -> new GuestClient.Throttle.Limits(1, 1, 0));
  }
}
