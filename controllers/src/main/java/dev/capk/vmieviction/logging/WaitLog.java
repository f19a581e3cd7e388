package dev.capk.vmieviction.logging;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.event.Level;

/**
 * The level of a waiting step's log line: INFO when what it waits for changed since the last line
 * for the same wait (or it is the first), DEBUG when it is the same again. A wait unseen for an
 * hour is told afresh.
 */
public final class WaitLog {

  private final Cache<String, Object> last =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterAccess(Duration.ofHours(1)).build();

  /**
   * {@code wait}: a key of its own ({@code uid/start/drain}); {@code waitsFor}: only what matters
   * to a reader (pods left, blockers), never a time that moves at each retry.
   */
  public Level level(String wait, Object waitsFor) {
    return changed(wait, waitsFor) ? Level.INFO : Level.DEBUG;
  }

  /** Whether what {@code wait} waits for changed since the last call (or this is the first). */
  public boolean changed(String wait, Object waitsFor) {
    Object was = last.asMap().put(wait, waitsFor);
    return !Objects.equals(was, waitsFor);
  }

  /** The wait is over: the next one under its key is told afresh. */
  public void forget(String wait) {
    last.invalidate(wait);
  }
}
