package dev.capk.vmieviction.e2e.harness;

import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Clusters shared within one JUnit run, started on first use and stopped when the run ends (see
 * {@link SharedClusterExtension}: with two or more failsafe JVMs a run is one test class). Test
 * code keeps its data apart by namespace and node names, so that classes can share them.
 */
public final class SharedClusters {
  private record Entry(String shape, LocalCluster cluster) {}

  private static final Map<String, Entry> CLUSTERS = new HashMap<>();

  /** Clusters of the other backends (k3s containers, clusters given by kubeconfig), by name. */
  private static final Map<String, KubeCluster> OTHERS = new HashMap<>();

  private SharedClusters() {}

  /** The shared cluster called {@code name}, started with {@code shape} on first use. */
  public static synchronized LocalCluster get(
      String name, UnaryOperator<LocalCluster.Builder> shape) {
    LocalCluster.Builder builder = shape.apply(LocalCluster.builder(name));
    Entry entry = CLUSTERS.get(name);
    if (entry == null) {
      entry = new Entry(builder.shape(), builder.start());
      CLUSTERS.put(name, entry);
    } else if (!entry.shape().equals(builder.shape())) {
      throw new IllegalStateException(
          "shared cluster "
              + name
              + " was started as "
              + entry.shape()
              + " but is now requested as "
              + builder.shape()
              + ": give the other shape another name");
    }
    return entry.cluster();
  }

  /**
   * The shared cluster called {@code name} from {@code backend}; a local one is shaped by {@code
   * shape}.
   */
  public static synchronized KubeCluster get(
      String name, ClusterBackend backend, UnaryOperator<LocalCluster.Builder> shape) {
    if (backend == ClusterBackend.LOCAL) {
      return get(name, shape);
    }
    return OTHERS.computeIfAbsent(name, n -> backend.start(n, shape));
  }

  /** Stops every shared cluster (JUnit calls this when its run ends). */
  public static synchronized void stopAll() {
    for (Entry e : CLUSTERS.values()) {
      e.cluster().close();
    }
    CLUSTERS.clear();
    for (KubeCluster c : OTHERS.values()) {
      c.close();
    }
    OTHERS.clear();
  }
}
