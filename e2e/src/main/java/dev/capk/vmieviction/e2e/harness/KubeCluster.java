package dev.capk.vmieviction.e2e.harness;

import io.kubernetes.client.openapi.ApiClient;
import java.nio.file.Path;

/**
 * A Kubernetes cluster the end-to-end scenarios run on: a {@link LocalCluster} (the default), a k3s
 * container ({@link K3sCluster}) or any cluster given by a kubeconfig ({@link ExistingCluster},
 * e.g. kind). Scenarios need only this: an admin identity, the real kubectl, kwok nodes, and a way
 * for the API server to call back a webhook served by this JVM.
 */
public interface KubeCluster extends AutoCloseable {
  String name();

  String serverUrl();

  /** The PEM of the CA that signs the API server's certificate. */
  String caCertificatePem();

  /** An admin kubeconfig file, credentials embedded. */
  Path kubeconfig();

  /**
   * The admin kubeconfig's text, credentials embedded (what a Cluster API kubeconfig Secret holds).
   */
  String adminKubeconfigYaml();

  /** A kubeconfig that authenticates with a bearer token, e.g. a ServiceAccount's. */
  default String kubeconfigWithToken(String user, String token) {
    return Kubeconfigs.withToken(name(), serverUrl(), caCertificatePem(), token, user);
  }

  /** Where files of this cluster's run go (kubeconfigs, logs of processes started for it). */
  Path dir();

  Kubectl kubectl();

  /** Nodes played by a kwok that this harness runs for this cluster. */
  KwokNodes kwokNodes();

  /** An admin client (read timeout long enough for watches). */
  ApiClient client();

  /**
   * A new admin client without a read timeout, as the client's informers require for their watches.
   */
  ApiClient informerClient();

  /**
   * The host name or IP by which this cluster's API server reaches this machine (for a webhook
   * served here).
   */
  String callbackHost();

  /**
   * True when callbacks from the API server arrive at this machine's loopback interface (a local
   * API server, or a tunnel ending here), so a webhook binds loopback only; false: all interfaces.
   */
  default boolean callbacksArriveOnLoopback() {
    return true;
  }

  /**
   * Makes {@code localPort} reachable from the API server at {@link #callbackHost()}, where that
   * takes a step.
   */
  default void exposeLocalPort(int localPort) {}

  /**
   * Stops what this harness started for the cluster (never the cluster itself unless it started
   * it).
   */
  @Override
  void close();
}
