package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.drain.SteppedDrains.DrainMemory;
import dev.capk.vmieviction.drain.SteppedDrains.EvictionOutcome;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Why each pod a drain has to remove is still on the node, as a step reports it. */
class PodWaitsTest {

  static final Instant NOW = Instant.parse("2025-03-01T12:00:00Z");

  @Test
  void aStepNamesTheFinalizersATerminatingPodWaitsBehind() throws Exception {
    OffsetDateTime deleted = OffsetDateTime.ofInstant(NOW.minusSeconds(5), ZoneOffset.UTC);
    V1Pod kept = TestPods.pod("shop", "cache-0").ownedBy("ReplicaSet", "cache").build();
    kept.getMetadata().deletionTimestamp(deleted).finalizers(List.of("example.com/keep"));
    V1Pod two = TestPods.pod("shop", "cache-1").ownedBy("ReplicaSet", "cache").build();
    two.getMetadata().deletionTimestamp(deleted).finalizers(List.of("a.io/x", "b.io/y"));
    V1Pod none = TestPods.pod("shop", "cache-2").ownedBy("ReplicaSet", "cache").build();
    none.getMetadata().deletionTimestamp(deleted).deletionGracePeriodSeconds(30L);

    // Every pod is terminating: nothing is due, so the step sends no request at all.
    DrainStep step =
        new SteppedDrains(
                Runnable::run,
                Clock.fixed(NOW, ZoneOffset.UTC),
                Duration.ofSeconds(5),
                Duration.ofSeconds(20))
            .step(
                new ApiClient(),
                "node-1",
                List.of(kept, two, none),
                DrainOptions.of(b -> b.force = true),
                new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(20)),
                NodeWatch.BudgetWatch.NONE);

    assertEquals(
        Map.of(
            PodRef.of(kept), "terminating behind finalizer example.com/keep",
            PodRef.of(two), "terminating behind finalizers a.io/x, b.io/y",
            PodRef.of(none),
                "terminating (grace period 30s), deletion not yet confirmed by its kubelet"),
        step.waiting());
    assertEquals(0, step.requests());
  }

  @Test
  void aTriedPodSaysWhatItsLastEvictionCameTo() {
    DrainMemory memory = new DrainMemory(Duration.ofSeconds(5), Duration.ofSeconds(20));
    PodRef web = new PodRef("shop", "web-0", "u1");
    memory.refused(web, EvictionOutcome.Kind.BLOCKED, Set.of("web-pdb"), NOW);
    assertEquals(
        "eviction refused by PodDisruptionBudget shop/web-pdb",
        memory.state(web).why(web),
        "a budget is named in its pod's namespace");

    PodRef denied = new PodRef("locked", "db-0", "u2");
    memory.failed(denied, "create pods/eviction denied: policy says no", true, NOW);
    assertEquals("create pods/eviction denied: policy says no", memory.state(denied).why(denied));

    PodRef failed = new PodRef("shop", "api-0", "u3");
    memory.failed(failed, "HTTP 500: boom", false, NOW);
    assertEquals("eviction failed: HTTP 500: boom", memory.state(failed).why(failed));

    PodRef flaky = new PodRef("shop", "api-1", "u4");
    memory.transientFailure(flaky, "connection reset", NOW);
    assertEquals("eviction failed, retrying: connection reset", memory.state(flaky).why(flaky));
  }
}
