package dev.capk.vmieviction.e2e.harness;

import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Hands a shared local cluster to a test class:
 *
 * <pre>
 * &#64;RegisterExtension
 * static final LocalClusterExtension infra = LocalClusterExtension.shared("infra");
 * </pre>
 *
 * The cluster starts before the first test class that needs it and stops when the JUnit run ends
 * (with two or more failsafe JVMs: when the class ends; see {@link SharedClusterExtension}).
 */
public final class LocalClusterExtension extends SharedClusterExtension<LocalCluster> {
  private LocalClusterExtension(String name, UnaryOperator<LocalCluster.Builder> shape) {
    super(name, shape);
  }

  public static LocalClusterExtension shared(
      String name, UnaryOperator<LocalCluster.Builder> shape) {
    return new LocalClusterExtension(name, shape);
  }

  /** A shared cluster with every component: controller manager, scheduler and kwok. */
  public static LocalClusterExtension shared(String name) {
    return shared(name, LocalCluster.Builder::withAll);
  }

  @Override
  LocalCluster obtain(ExtensionContext context) {
    return SharedClusters.get(name, localShape);
  }
}
