package dev.capk.vmieviction.drain;

import static dev.capk.vmieviction.drain.TestPods.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.PodFilters.DaemonSetLookup;
import dev.capk.vmieviction.drain.PodFilters.PodFilter;
import dev.capk.vmieviction.drain.PodFilters.PodVerdict;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Each built-in filter's verdicts, and the chain's order, against kubectl's behaviour. */
class PodFiltersTest {
  private static final Instant NOW = Instant.parse("2025-01-01T12:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  /** DaemonSets "gone-*" are NotFound, "forbidden-*" cannot be read, any other exists. */
  private static final DaemonSetLookup LOOKUP =
      (ns, name) ->
          name.startsWith("gone")
              ? Optional.of(new ApiException(404, "not found"))
              : name.startsWith("forbidden")
                  ? Optional.of(
                      new ApiException(
                          403,
                          null,
                          "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"message\":"
                              + "\"daemonsets.apps \\\""
                              + name
                              + "\\\" is forbidden\"}"))
                  : Optional.empty();

  private static List<PodVerdict> chain(Consumer<DrainOptions.Builder> opts, V1Pod p) {
    List<PodVerdict> out = new ArrayList<>();
    for (PodFilter f : new PodFilters(DrainOptions.of(opts), LOOKUP, CLOCK).inOrder()) {
      PodVerdict v = f.verdict(p);
      out.add(v);
      if (!v.deletes()) {
        break;
      }
    }
    return out;
  }

  /** The chain's final verdict, as kubectl computes it. */
  private static PodVerdict last(Consumer<DrainOptions.Builder> opts, V1Pod p) {
    List<PodVerdict> c = chain(opts, p);
    return c.get(c.size() - 1);
  }

  private static Consumer<DrainOptions.Builder> none() {
    return b -> {};
  }

  @Test
  void managedRunningPodIsDeleted() {
    PodVerdict v = last(none(), pod("ns", "web-1").ownedBy("ReplicaSet", "web").build());
    assertEquals(PodVerdict.Action.DELETE, v.action());
    assertFalse(v.warning());
  }

  @Test
  void daemonSetPodRefusesUnlessIgnoredThenSkippedWithWarning() {
    V1Pod ds = pod("kube-system", "proxy-1").ownedBy("DaemonSet", "proxy").build();
    PodVerdict refused = last(none(), ds);
    assertEquals(PodVerdict.Action.REFUSE, refused.action());
    assertEquals(PodFilters.DAEMONSET_FATAL, refused.reason());

    PodVerdict ignored = last(b -> b.ignoreAllDaemonSets = true, ds);
    assertEquals(PodVerdict.Action.SKIP, ignored.action());
    assertTrue(ignored.warning());
    assertEquals(PodFilters.DAEMONSET_WARNING, ignored.reason());
  }

  @Test
  void orphanedDaemonSetPodRefusesEvenWhenIgnoredButForceDeletesItWithWarning() {
    V1Pod orphan = pod("ns", "agent-1").ownedBy("DaemonSet", "gone-agent").build();
    PodVerdict refused = last(b -> b.ignoreAllDaemonSets = true, orphan);
    assertEquals(PodVerdict.Action.REFUSE, refused.action());
    assertEquals("daemonsets.apps \"gone-agent\" not found", refused.reason());

    List<PodVerdict> forced = chain(b -> b.force = true, orphan);
    assertEquals(PodVerdict.Action.DELETE, forced.get(forced.size() - 1).action());
    assertTrue(forced.stream().anyMatch(v -> v.warning() && v.reason().contains("not found")));
  }

  @Test
  void daemonSetLookupFailureRefuses() {
    PodVerdict v =
        last(
            b -> {
              b.ignoreAllDaemonSets = true;
              b.force = true;
            },
            pod("ns", "a").ownedBy("DaemonSet", "forbidden-x").build());
    assertEquals(PodVerdict.Action.REFUSE, v.action());
    assertTrue(v.reason().contains("forbidden"));
  }

  @Test
  void finishedDaemonSetPodIsDeleted() {
    assertEquals(
        PodVerdict.Action.DELETE,
        last(none(), pod("ns", "a").ownedBy("DaemonSet", "x").phase("Succeeded").build()).action());
  }

  @Test
  void mirrorPodIsSkippedWhateverElseItIs() {
    // Unmanaged and with emptyDir: the mirror filter comes first and skips it.
    PodVerdict v = last(none(), pod("kube-system", "etcd-node").mirror().emptyDir().build());
    assertEquals(PodVerdict.Action.SKIP, v.action());
    assertEquals(PodFilters.MIRROR_POD, v.reason());
  }

  @Test
  void emptyDirRefusesUnlessAllowedThenWarns() {
    V1Pod p = pod("ns", "cache-1").ownedBy("ReplicaSet", "cache").emptyDir().build();
    PodVerdict refused = last(none(), p);
    assertEquals(PodVerdict.Action.REFUSE, refused.action());
    assertEquals(PodFilters.LOCAL_STORAGE_FATAL, refused.reason());

    List<PodVerdict> allowed = chain(b -> b.deleteEmptyDirData = true, p);
    assertEquals(PodVerdict.Action.DELETE, allowed.get(allowed.size() - 1).action());
    assertTrue(allowed.contains(PodVerdict.deleteWithWarning(PodFilters.LOCAL_STORAGE_WARNING)));
  }

  @Test
  void finishedPodWithEmptyDirAndNoControllerIsDeletedWithoutFlags() {
    for (String phase : List.of("Succeeded", "Failed")) {
      List<PodVerdict> c = chain(none(), pod("ns", "job-x").emptyDir().phase(phase).build());
      assertEquals(PodVerdict.Action.DELETE, c.get(c.size() - 1).action(), phase);
      assertTrue(c.stream().noneMatch(PodVerdict::warning), phase);
    }
  }

  @Test
  void unmanagedPodRefusesUnlessForcedThenWarns() {
    V1Pod bare = pod("ns", "bare").build();
    PodVerdict refused = last(none(), bare);
    assertEquals(PodVerdict.Action.REFUSE, refused.action());
    assertEquals(PodFilters.UNMANAGED_FATAL, refused.reason());

    PodVerdict forced = last(b -> b.force = true, bare);
    assertEquals(PodVerdict.deleteWithWarning(PodFilters.UNMANAGED_WARNING), forced);
  }

  @Test
  void anOwnerThatIsNotTheControllerDoesNotCount() {
    PodVerdict v = last(none(), pod("ns", "a").ownedNotAsController("ConfigMap", "cm").build());
    assertEquals(PodVerdict.Action.REFUSE, v.action());
  }

  @Test
  void emptyDirWithDeletionAllowedStillRefusesWhenUnmanagedAndNotForced() {
    // The local-storage warning lets the pod through to the next filter, which refuses it.
    PodVerdict v = last(b -> b.deleteEmptyDirData = true, pod("ns", "a").emptyDir().build());
    assertEquals(PodFilters.UNMANAGED_FATAL, v.reason());
  }

  @Test
  void podsDeletedLongerAgoThanSkipWaitAreSkippedFirst() {
    V1Pod stuck =
        pod("ns", "stuck")
            .ownedBy("DaemonSet", "x")
            .deletedAt(OffsetDateTime.ofInstant(NOW.minusSeconds(61), ZoneOffset.UTC))
            .build();
    PodVerdict v = last(b -> b.skipWaitForDeleteTimeout = Duration.ofSeconds(60), stuck);
    assertEquals(PodVerdict.Action.SKIP, v.action());
    assertTrue(v.reason().contains("60"));

    V1Pod recent =
        pod("ns", "recent")
            .ownedBy("ReplicaSet", "x")
            .deletedAt(OffsetDateTime.ofInstant(NOW.minusSeconds(60), ZoneOffset.UTC))
            .build();
    assertEquals(
        PodVerdict.Action.DELETE,
        last(b -> b.skipWaitForDeleteTimeout = Duration.ofSeconds(60), recent).action(),
        "exactly the limit is not older than it");
    assertEquals(
        PodVerdict.Action.REFUSE,
        last(none(), stuck).action(),
        "without skip-wait the pod is judged as usual");
  }

  @Test
  void verdictFactoriesCarryTheirMeaning() {
    assertTrue(PodVerdict.delete().deletes());
    assertFalse(PodVerdict.skipWithWarning("w").deletes());
    assertTrue(PodVerdict.skipWithWarning("w").warning());
  }
}
