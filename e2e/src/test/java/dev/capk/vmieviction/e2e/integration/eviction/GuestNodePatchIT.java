package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The guest node's cordon and uncordon patches against a real API server: a status heartbeat since
 * the node was read does not refuse them (a resourceVersion guard did: 409, then a GET and the
 * PATCH again), while a change of what they guard, another's cordon or our mark gone, does.
 */
class GuestNodePatchIT {

  @RegisterExtension
  static final LocalClusterExtension guestExt = LocalClusterExtension.shared("guest-a");

  static LocalCluster guest;

  @BeforeAll
  static void cluster() {
    guest = guestExt.cluster();
  }

  @Test
  void cordonAndUncordonApplyToANodeWhoseStatusChangedSinceItWasRead() throws Exception {
    String name = unique("patch-heartbeat");
    guest.kwokNodes().createNamed(name, Map.of());
    V1Node read = node(name);
    heartbeat(name, read);

    assertTrue(
        patch(name, Cordoner.cordonPatch(read, EvictionAnnotations.CORDONED_BY, "uid-1")),
        "cordoned");
    V1Node cordoned = node(name);
    assertEquals(Boolean.TRUE, cordoned.getSpec().getUnschedulable());
    assertEquals("uid-1", mark(cordoned));

    heartbeat(name, cordoned);
    assertTrue(
        patch(name, Cordoner.uncordonPatch(cordoned, EvictionAnnotations.CORDONED_BY)),
        "uncordoned");
    V1Node back = node(name);
    assertNotEquals(Boolean.TRUE, back.getSpec().getUnschedulable());
    assertNull(mark(back));
  }

  @Test
  void aCordonRefusesANodeSomeoneElseCordonedSinceItWasRead() throws Exception {
    String name = unique("patch-admin");
    guest.kwokNodes().createNamed(name, Map.of());
    V1Node read = node(name);
    guest.kubectl().runOrFail(null, "cordon", name);

    assertFalse(
        patch(name, Cordoner.cordonPatch(read, EvictionAnnotations.CORDONED_BY, "uid-1")),
        "refused");
    assertNull(mark(node(name)), "an admin's cordon is not marked ours");
  }

  @Test
  void anUncordonRefusesANodeWhoseMarkWasRemovedSinceItWasRead() throws Exception {
    String name = unique("patch-unmarked");
    guest.kwokNodes().createNamed(name, Map.of());
    assertTrue(
        patch(name, Cordoner.cordonPatch(node(name), EvictionAnnotations.CORDONED_BY, "uid-1")));
    V1Node cordoned = node(name);
    guest
        .kubectl()
        .runOrFail(null, "annotate", "node", name, EvictionAnnotations.CORDONED_BY + "-");

    assertFalse(
        patch(name, Cordoner.uncordonPatch(cordoned, EvictionAnnotations.CORDONED_BY)), "refused");
    assertEquals(Boolean.TRUE, node(name).getSpec().getUnschedulable(), "still cordoned");
  }

  static V1Node node(String name) throws Exception {
    return new CoreV1Api(guest.client()).readNode(name).execute();
  }

  static String mark(V1Node node) {
    var a = node.getMetadata().getAnnotations();
    return a == null ? null : a.get(EvictionAnnotations.CORDONED_BY);
  }

  /** Each heartbeat's time differs from the last (kwok's own are not later than now). */
  static final AtomicInteger HEARTBEATS = new AtomicInteger();

  /** A status write, as a kubelet's heartbeat: the node's resourceVersion moves on. */
  static void heartbeat(String name, V1Node before) throws Exception {
    guest
        .kubectl()
        .runOrFail(
            null,
            "patch",
            "node",
            name,
            "--subresource=status",
            "--type=strategic",
            "-p",
            "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"lastHeartbeatTime\":\""
                + Instant.now()
                    .plusSeconds(60 + HEARTBEATS.incrementAndGet())
                    .truncatedTo(ChronoUnit.SECONDS)
                + "\"}]}}");
    assertNotEquals(
        before.getMetadata().getResourceVersion(),
        node(name).getMetadata().getResourceVersion(),
        "the heartbeat changed the node");
  }

  /** Applies a JSON Patch. @return false if the server refused it */
  static boolean patch(String name, String jsonPatch) {
    return guest
        .kubectl()
        .run(null, Duration.ofSeconds(30), "patch", "node", name, "--type=json", "-p", jsonPatch)
        .ok();
  }
}
