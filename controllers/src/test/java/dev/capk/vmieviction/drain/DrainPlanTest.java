package dev.capk.vmieviction.drain;

import static dev.capk.vmieviction.drain.TestPods.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.PodFilters.DrainPlan;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class DrainPlanTest {
  private static DrainPlan plan(Consumer<DrainOptions.Builder> opts, V1Pod... pods) {
    DrainOptions o = DrainOptions.of(opts);
    PodFilters f = new PodFilters(o, (ns, n) -> Optional.empty(), Clock.systemUTC());
    return DrainPlan.of(f.inOrder(), List.of(pods));
  }

  private static List<String> names(List<PodRef> refs) {
    return refs.stream().map(PodRef::toString).toList();
  }

  @Test
  void podsAreSortedAndSplitIntoEvictAndSkip() {
    DrainPlan p =
        plan(
            b -> b.ignoreAllDaemonSets = true,
            pod("b", "web-2").ownedBy("ReplicaSet", "web").build(),
            pod("a", "web-1").ownedBy("ReplicaSet", "web").build(),
            pod("kube-system", "proxy").ownedBy("DaemonSet", "proxy").build(),
            pod("kube-system", "etcd").mirror().build());
    assertFalse(p.refused());
    assertEquals(
        List.of("a/web-1", "b/web-2"), names(p.toEvict().stream().map(PodRef::of).toList()));
    assertEquals(
        List.of("kube-system/etcd", "kube-system/proxy"),
        p.skipped().keySet().stream().map(PodRef::toString).toList());
    assertEquals(List.of("ignoring DaemonSet-managed Pods: kube-system/proxy"), p.warningLines());
  }

  @Test
  void refusalsAreGroupedByReasonInFilterOrderWithSortedPods() {
    DrainPlan p =
        plan(
            b -> {},
            pod("z", "bare-2").build(),
            pod("a", "cache").ownedBy("ReplicaSet", "c").emptyDir().build(),
            pod("a", "bare-1").build(),
            pod("kube-system", "proxy").ownedBy("DaemonSet", "proxy").build(),
            pod("a", "fine").ownedBy("ReplicaSet", "r").build());
    assertTrue(p.refused());
    assertEquals(
        List.of(
            "cannot delete " + PodFilters.DAEMONSET_FATAL,
            "cannot delete " + PodFilters.LOCAL_STORAGE_FATAL,
            PodFilters.UNMANAGED_FATAL),
        List.copyOf(p.refusals().keySet()));
    assertEquals(
        List.of("a/bare-1", "z/bare-2"), names(p.refusals().get(PodFilters.UNMANAGED_FATAL)));
  }

  @Test
  void refusedExceptionListsEveryRefusedPodKubectlStyle() {
    DrainPlan p =
        plan(
            b -> {},
            pod("a", "bare-1").build(),
            pod("a", "bare-2").build(),
            pod("a", "cache").ownedBy("ReplicaSet", "c").emptyDir().build());
    DrainRefusedException e = new DrainRefusedException("node-1", p.refusals());
    assertEquals(
        "cannot drain node \"node-1\": "
            + "cannot delete Pods with local storage (use --delete-emptydir-data to override): a/cache; "
            + "cannot delete Pods that declare no controller (use --force to override): a/bare-1, a/bare-2",
        e.getMessage());
    assertEquals(3, e.refusedPods().size());
    assertThrows(UnsupportedOperationException.class, () -> e.refusals().clear());
  }

  @Test
  void kubectlReasonPrefixRule() {
    assertEquals(
        "cannot delete daemonsets.apps \"x\" not found",
        DrainRefusedException.kubectlReason("daemonsets.apps \"x\" not found"));
    assertEquals("Cannot delete this", DrainRefusedException.kubectlReason("Cannot delete this"));
    assertEquals("cannot delete unexpected error", DrainRefusedException.kubectlReason(""));
  }

  @Test
  void asKubectlOnlyTheLastVerdictsWarningIsKept() {
    DrainPlan forced =
        plan(
            b -> {
              b.force = true;
              b.deleteEmptyDirData = true;
            },
            pod("a", "scratch").emptyDir().build());
    assertEquals(List.of("a/scratch"), names(forced.toEvict().stream().map(PodRef::of).toList()));
    assertEquals(
        Map.of(
            PodFilters.UNMANAGED_WARNING,
            List.of(new PodRef("a", "scratch", PodRef.of(forced.toEvict().get(0)).uid()))),
        forced.warnings());

    // kubectl 1.35 prints no "deleting Pods with local storage": the next filter's "Okay" wins.
    DrainPlan owned =
        plan(
            b -> b.deleteEmptyDirData = true,
            pod("a", "cache").emptyDir().ownedBy("ReplicaSet", "cache").build());
    assertEquals(List.of("a/cache"), names(owned.toEvict().stream().map(PodRef::of).toList()));
    assertEquals(Map.of(), owned.warnings());
  }

  @Test
  void emptyNodeHasAnEmptyPlan() {
    DrainPlan p = plan(b -> {});
    assertFalse(p.refused());
    assertTrue(p.toEvict().isEmpty());
    assertTrue(p.skipped().isEmpty());
  }
}
