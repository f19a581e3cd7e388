package dev.capk.vmieviction.e2e.harness;

import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Hands a shared local cluster to a test class:
 * <pre>
 * &#64;RegisterExtension
 * static final LocalClusterExtension infra = LocalClusterExtension.shared("infra", LocalCluster.Builder::withAll);
 * </pre>
 * The cluster starts before the first test class that needs it and stops when the whole test run ends.
 */
public final class LocalClusterExtension implements BeforeAllCallback {
    private final String name;
    private final UnaryOperator<LocalCluster.Builder> shape;
    private LocalCluster cluster;

    private LocalClusterExtension(String name, UnaryOperator<LocalCluster.Builder> shape) {
        this.name = name;
        this.shape = shape;
    }

    public static LocalClusterExtension shared(String name, UnaryOperator<LocalCluster.Builder> shape) {
        return new LocalClusterExtension(name, shape);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        cluster = SharedClusters.get(name, shape);
        // The root store closes its resources when the test run ends: that stops the shared clusters.
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(SharedClustersCloser.class, k -> new SharedClustersCloser(), SharedClustersCloser.class);
    }

    public LocalCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException("cluster " + name + " is not started yet: use it from a test or @BeforeAll");
        }
        return cluster;
    }

    static final class SharedClustersCloser implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            SharedClusters.stopAll();
        }
    }
}
