package dev.capk.vmieviction.e2e.harness;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Waits for a condition, with a message that says what was awaited and what was last seen. */
public final class Await {
  private static final Duration POLL = Duration.ofMillis(100);

  private Await() {}

  /**
   * Polls {@code condition} until it returns true. On timeout, throws an {@link AssertionError}
   * naming {@code what} and the last exception the condition threw, if any.
   */
  public static void until(String what, Duration timeout, Callable<Boolean> condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (true) {
      try {
        if (Boolean.TRUE.equals(condition.call())) {
          return;
        }
        last = null;
      } catch (Exception e) {
        last = e;
      }
      if (System.nanoTime() > deadline) {
        String seen = last == null ? "" : "; last error: " + last;
        throw new AssertionError(
            "timed out after " + timeout.toSeconds() + "s waiting for " + what + seen, last);
      }
      try {
        Thread.sleep(POLL.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what, e);
      }
    }
  }
}
