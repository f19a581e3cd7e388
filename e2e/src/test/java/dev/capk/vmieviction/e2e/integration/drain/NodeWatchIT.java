package dev.capk.vmieviction.e2e.integration.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.NodeWatch;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.PatchUtils;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A guest node's watch on real API servers: on a current one its state comes as the watch's first
 * events (a streaming list), and on one whose WatchList feature is off the watch lists instead, at
 * once; either way it knows a node that exists, knows that a node does not, and follows changes.
 */
class NodeWatchIT {
  @RegisterExtension
  static final LocalClusterExtension streaming =
      LocalClusterExtension.shared("node-watch-streaming", b -> b);

  @RegisterExtension
  static final LocalClusterExtension listing =
      LocalClusterExtension.shared(
          "no-watchlist", b -> b.apiServerFlag("--feature-gates=WatchList=false"));

  @Test
  void onAServerThatStreamsListsTheWatchKnowsItsNodeAndFollowsIt() throws Exception {
    knowsItsNodeAndFollowsIt(streaming.cluster());
  }

  @Test
  void onAServerWithoutWatchListTheWatchListsAndKnowsItsNodeAndFollowsIt() throws Exception {
    knowsItsNodeAndFollowsIt(listing.cluster());
  }

  private static void knowsItsNodeAndFollowsIt(LocalCluster cluster) throws Exception {
    String name = "nw-" + UUID.randomUUID().toString().substring(0, 8);
    CoreV1Api core = new CoreV1Api(cluster.client());
    core.createNode(new V1Node().metadata(new V1ObjectMeta().name(name))).execute();
    core.createNode(new V1Node().metadata(new V1ObjectMeta().name(name + "-other"))).execute();

    try (NodeWatch present = NodeWatch.start(cluster.client(), "it", name);
        NodeWatch absent = NodeWatch.start(cluster.client(), "it", name + "-none")) {
      assertTrue(present.awaitListed(Duration.ofSeconds(10)), "current within the step's wait");
      assertEquals(name, present.node(name).orElseThrow().getMetadata().getName());
      assertEquals(Optional.empty(), present.node(name + "-other"), "only its own node is kept");
      assertTrue(absent.awaitListed(Duration.ofSeconds(10)), "an answer: no such node");
      assertEquals(Optional.empty(), absent.node(name + "-none"));

      PatchUtils.patch(
          V1Node.class,
          () ->
              core.patchNode(name, new V1Patch("{\"metadata\":{\"labels\":{\"seen\":\"yes\"}}}"))
                  .buildCall(null),
          V1Patch.PATCH_FORMAT_STRATEGIC_MERGE_PATCH,
          cluster.client());
      Await.until(
          "the watch follows the node's change",
          Duration.ofSeconds(30),
          () ->
              present
                  .node(name)
                  .map(n -> n.getMetadata().getLabels())
                  .map(l -> "yes".equals(l.get("seen")))
                  .orElse(false));
      assertTrue(present.current());
      assertEquals(Map.of("seen", "yes"), present.node(name).get().getMetadata().getLabels());
    }
  }
}
