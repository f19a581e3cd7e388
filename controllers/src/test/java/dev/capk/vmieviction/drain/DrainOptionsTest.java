package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class DrainOptionsTest {
  @Test
  void defaultsAreKubectlDefaults() {
    DrainOptions o = DrainOptions.defaults();
    assertFalse(o.force());
    assertFalse(o.ignoreAllDaemonSets());
    assertFalse(o.deleteEmptyDirData());
    assertEquals(-1, o.gracePeriodSeconds());
    assertEquals(Duration.ZERO, o.timeout());
    assertEquals("", o.podSelector());
    assertFalse(o.disableEviction());
    assertEquals(Duration.ZERO, o.skipWaitForDeleteTimeout());
    assertEquals(500, o.chunkSize());
    assertEquals(DryRun.NONE, o.dryRun());
    assertEquals(Duration.ofSeconds(5), o.evictionRetryInterval());
    assertTrue(o.maxConcurrentEvictions() >= 1);
  }

  private static String rejected(Consumer<DrainOptions.Builder> bad) {
    return assertThrows(IllegalArgumentException.class, () -> DrainOptions.of(bad)).getMessage();
  }

  @Test
  void badValuesAreRejectedWithAMessageNamingTheOption() {
    assertTrue(rejected(b -> b.gracePeriodSeconds = -2).contains("gracePeriodSeconds"));
    assertTrue(rejected(b -> b.timeout = Duration.ofSeconds(-1)).contains("timeout"));
    assertTrue(rejected(b -> b.timeout = null).contains("timeout"));
    assertTrue(
        rejected(b -> b.skipWaitForDeleteTimeout = Duration.ofSeconds(-1))
            .contains("skipWaitForDeleteTimeout"));
    assertTrue(rejected(b -> b.chunkSize = -1).contains("chunkSize"));
    assertTrue(rejected(b -> b.dryRun = null).contains("dryRun"));
    assertTrue(rejected(b -> b.maxConcurrentEvictions = 0).contains("maxConcurrentEvictions"));
    assertTrue(
        rejected(b -> b.evictionRetryInterval = Duration.ZERO).contains("evictionRetryInterval"));
  }

  @Test
  void anInvalidPodSelectorIsRejectedAtBuildTime() {
    String msg = rejected(b -> b.podSelector = "app in (web");
    assertTrue(msg.startsWith("invalid label selector \"app in (web\""), msg);
  }

  @Test
  void selectorIsTrimmedAndParsed() {
    DrainOptions o = DrainOptions.of(b -> b.podSelector = "  app=web ");
    assertEquals("app=web", o.podSelector());
  }
}
