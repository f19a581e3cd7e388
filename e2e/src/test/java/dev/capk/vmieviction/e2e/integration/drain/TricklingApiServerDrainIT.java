package dev.capk.vmieviction.e2e.integration.drain;

import static dev.capk.vmieviction.e2e.integration.drain.DrainFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.TricklingProxy;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.StringReader;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12 item 5, in the drain engine: every request of a drain ends by the drain's deadline, even
 * when the API server answers one byte every two seconds (each read within the client's read
 * timeout) and the client itself has no total call timeout.
 */
class TricklingApiServerDrainIT {
  @RegisterExtension
  static final LocalClusterExtension DRAIN = LocalClusterExtension.shared("drain");

  /** How long the test waits for the drain to return at all: far more than its 5 s deadline. */
  private static final Duration HANG = Duration.ofSeconds(90);

  @Test
  void aDrainAgainstATricklingApiServerEndsByItsDeadline() throws Exception {
    LocalCluster cluster = DRAIN.cluster();
    DrainFixture fx = new DrainFixture(cluster);
    String node = fx.nodes(unique("trickle"), 1).get(0);
    String ns = fx.namespace(unique("trickle"));
    fx.pod(ns, node, "web", DrainFixture.ownedBy(fx.owner(ns)));
    fx.awaitRunning(ns, 1);
    try (TricklingProxy proxy =
        TricklingProxy.start(URI.create(cluster.serverUrl()).getPort(), Duration.ofSeconds(2))) {
      proxy.arm();
      ApiClient viaProxy =
          ClientBuilder.kubeconfig(
                  KubeConfig.loadKubeConfig(
                      new StringReader(
                          cluster.adminKubeconfigYaml().replace(cluster.serverUrl(), proxy.url()))))
              .build();
      viaProxy.setReadTimeout(5_000);
      NodeDrainer drainer = new NodeDrainer(viaProxy);
      CompletableFuture<Throwable> outcome =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  drainer.drain(
                      node,
                      DrainOptions.of(b -> b.timeout = Duration.ofSeconds(5)),
                      NodeDrainer.DrainOutput.NONE);
                  return null;
                } catch (Exception e) {
                  return e;
                }
              });
      // Before: the drain's first request (listing the node's pods) took hours.
      Throwable failure = outcome.get(HANG.toSeconds(), TimeUnit.SECONDS);
      ApiException e = assertInstanceOf(ApiException.class, failure);
      assertEquals(0, e.getCode(), "no answer within the drain's deadline");
    }
    assertEquals(
        1, fx.podsOn(node).size(), "no eviction through the trickling server went through");
  }
}
