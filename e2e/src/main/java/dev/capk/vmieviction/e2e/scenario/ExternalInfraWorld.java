package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.KubeCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * CAPK's external infra: one management cluster holding Cluster API's objects (Clusters,
 * KubevirtClusters, Machines, KubevirtMachines, the tenants' kubeconfig Secrets), and infra
 * clusters where the tenants' VMs run, each an {@link EvacuationWorld} (its kwok infra nodes, the
 * KubeVirt stand-in). A tenant's KubevirtCluster names, in {@code spec.infraClusterSecretRef}, a
 * Secret holding the kubeconfig of its infra cluster (key {@code kubeconfig}) and the infra
 * namespace of its VMs (key {@code namespace}).
 */
public final class ExternalInfraWorld implements AutoCloseable {
  private final KubeCluster management;
  private final List<EvacuationWorld> infraWorlds = new ArrayList<>();

  private ExternalInfraWorld(KubeCluster management) {
    this.management = management;
    Crds.installTestCrds(management);
  }

  /** A world whose Cluster API objects live in {@code management} (test CRDs installed there). */
  public static ExternalInfraWorld start(KubeCluster management) {
    return new ExternalInfraWorld(management);
  }

  /** An infra cluster of this world, with {@code infraNodeCount} kwok infra nodes. */
  public EvacuationWorld addInfraCluster(KubeCluster infra, String prefix, int infraNodeCount) {
    EvacuationWorld w = EvacuationWorld.start(infra, prefix, infraNodeCount);
    infraWorlds.add(w);
    return w;
  }

  /**
   * A tenant whose VMs run in {@code infraWorld}'s cluster, reached with {@code infraKubeconfig}:
   * its Cluster, kubeconfig Secret, KubevirtCluster (owned by the Cluster) and infra Secret in the
   * management cluster.
   */
  public TenantCluster addTenant(
      EvacuationWorld infraWorld, String shortName, KubeCluster guest, String infraKubeconfig) {
    TenantCluster t = infraWorld.addTenant(shortName, guest, management);
    bindToInfra(management, t, infraKubeconfig);
    return t;
  }

  /**
   * What CAPK's external infra keeps for {@code tenant} in {@code management}: its infra Secret and
   * a KubevirtCluster owned by its Cluster, naming that Secret in {@code
   * spec.infraClusterSecretRef}.
   */
  public static void bindToInfra(
      KubeCluster management, TenantCluster tenant, String infraKubeconfig) {
    String clusterUid =
        management
            .kubectl()
            .runOrFail(
                null,
                "-n",
                tenant.namespace(),
                "get",
                "clusters.cluster.x-k8s.io",
                tenant.name(),
                "-o",
                "jsonpath={.metadata.uid}")
            .strip();
    setInfraSecret(management, tenant, infraKubeconfig);
    management
        .kubectl()
        .apply(
            """
                apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
                kind: KubevirtCluster
                metadata:
                  name: %1$s
                  namespace: %2$s
                  labels: {cluster.x-k8s.io/cluster-name: %1$s}
                  ownerReferences:
                  - {apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, name: %1$s, uid: %3$s}
                spec:
                  infraClusterSecretRef: {apiVersion: v1, kind: Secret, name: %4$s, namespace: %2$s}
                """
                .formatted(tenant.name(), tenant.namespace(), clusterUid, infraSecretName(tenant)));
  }

  /** The Secret {@code tenant}'s KubevirtCluster names: {@code <cluster>-infra}. */
  public static String infraSecretName(TenantCluster tenant) {
    return tenant.name() + "-infra";
  }

  /**
   * Writes (or rotates) {@code tenant}'s infra Secret: {@code kubeconfig} as given, {@code
   * namespace} the tenant's namespace in the infra cluster.
   */
  public void setInfraSecret(TenantCluster tenant, String infraKubeconfig) {
    setInfraSecret(management, tenant, infraKubeconfig);
  }

  private static void setInfraSecret(
      KubeCluster management, TenantCluster tenant, String infraKubeconfig) {
    management
        .kubectl()
        .apply(
            """
                apiVersion: v1
                kind: Secret
                metadata: {name: %1$s, namespace: %2$s}
                type: Opaque
                data:
                  kubeconfig: %3$s
                  namespace: %4$s
                """
                .formatted(
                    infraSecretName(tenant),
                    tenant.namespace(),
                    base64(infraKubeconfig),
                    base64(tenant.namespace())));
  }

  private static String base64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  public KubeCluster management() {
    return management;
  }

  public List<EvacuationWorld> infraWorlds() {
    return List.copyOf(infraWorlds);
  }

  /**
   * The Warning events' reasons and messages on {@code kind/name} in the management cluster, one
   * per line.
   */
  public String managementWarnings(String namespace, String kind, String name) {
    return management
        .kubectl()
        .run(
            null,
            Duration.ofSeconds(10),
            "-n",
            namespace,
            "get",
            "events",
            "--field-selector",
            "involvedObject.kind=" + kind + ",involvedObject.name=" + name + ",type=Warning",
            "-o",
            "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
        .stdout();
  }

  /**
   * Closes each infra world (keeping its events, removing its VMs); the management objects stay
   * with the management cluster.
   */
  @Override
  public void close() {
    infraWorlds.forEach(EvacuationWorld::close);
    keepManagementEvents();
  }

  /** The management cluster's events, in a file for the suite's secret-leak check. */
  private void keepManagementEvents() {
    String events =
        management
            .kubectl()
            .run(null, Duration.ofSeconds(30), "get", "events", "-A", "-o", "yaml")
            .stdout();
    try {
      java.nio.file.Files.writeString(
          dev.capk.vmieviction.e2e.harness.RepoPaths.workDir()
              .resolve("events-" + management.name() + ".yaml"),
          events);
    } catch (java.io.IOException e) {
      System.out.println("could not keep the management cluster's events: " + e.getMessage());
    }
  }
}
