package dev.capk.vmieviction.logging;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.event.Level;

/**
 * The level of a waiting step's log line: INFO when what it waits for changed since the last line
 * for the same wait (or it is the first), DEBUG when it is the same again. A step retried every few
 * seconds while nothing changes says so once, and every change is still told. Waits are keyed by
 * the caller (an evacuation, a step); one forgotten after an hour unseen is told afresh.
 */
public final class WaitLog {

  private final Cache<String, Object> last =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterAccess(Duration.ofHours(1)).build();

  /**
   * @param wait which wait (e.g. {@code uid/start/drain}): waits never share a key
   * @param waitsFor what it waits for, compared with {@link Object#equals}; only what matters to a
   *     reader (pods left, blockers), never a time that moves at each retry
   */
  public Level level(String wait, Object waitsFor) {
    return changed(wait, waitsFor) ? Level.INFO : Level.DEBUG;
  }

  /**
   * Whether what {@code wait} waits for changed since the last call (or this is the first), for a
   * line logged at another level than INFO when it did.
   */
  public boolean changed(String wait, Object waitsFor) {
    Object was = last.asMap().put(wait, waitsFor);
    return !Objects.equals(was, waitsFor);
  }

  /** The wait is over: the next one under its key is told afresh. */
  public void forget(String wait) {
    last.invalidate(wait);
  }
}
