package dev.capk.vmieviction.e2e.harness;

import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Hands a test class a named cluster, shared by the fields and classes of one JUnit run: obtained
 * before the first class that needs it, stopped (with every other shared cluster) when the run's
 * root store closes. Failsafe with two or more JVMs (`make test`) hands each JVM one class at a
 * time as a JUnit run of its own, so a class's clusters start with it and stop when it ends; with
 * one JVM the classes of the run share them.
 */
abstract class SharedClusterExtension<C extends KubeCluster> implements BeforeAllCallback {
  protected final String name;
  protected final UnaryOperator<LocalCluster.Builder> localShape;
  private C cluster;

  SharedClusterExtension(String name, UnaryOperator<LocalCluster.Builder> localShape) {
    this.name = name;
    this.localShape = localShape;
  }

  /** The shared cluster for this class (starting it if it is the first to ask). */
  abstract C obtain(ExtensionContext context);

  @Override
  public void beforeAll(ExtensionContext context) {
    cluster = obtain(context);
    // The root store closes its resources when the JUnit run ends: that stops the shared clusters.
    context
        .getRoot()
        .getStore(ExtensionContext.Namespace.GLOBAL)
        .getOrComputeIfAbsent(
            SharedClustersCloser.class,
            k -> new SharedClustersCloser(),
            SharedClustersCloser.class);
  }

  public C cluster() {
    if (cluster == null) {
      throw new IllegalStateException(
          "cluster " + name + " is not started yet: use it from a test or @BeforeAll");
    }
    return cluster;
  }

  private static final class SharedClustersCloser
      implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() {
      SharedClusters.stopAll();
    }
  }
}
