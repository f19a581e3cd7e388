package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.kubevirtstandin.KubeVirtStandIn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One infra cluster with its own kwok infra nodes, tenants (guest clusters with their VMs), and the
 * KubeVirt stand-in: the setting of an infra node drain. Worlds can share clusters: every name is
 * prefixed, and a world's VMs select only its own infra nodes.
 */
public final class EvacuationWorld implements AutoCloseable {
  private final KubeCluster infra;
  private final String prefix;
  private final List<String> infraNodes;
  private final Map<String, TenantCluster> tenants = new LinkedHashMap<>();
  private final GuestReboots reboots;

  /**
   * One stand-in per infra cluster (two would both act on every VM); worlds on one cluster share
   * it.
   */
  private record SharedStandIn(KubeVirtStandIn standIn, GuestReboots reboots) {}

  private static final Map<String, SharedStandIn> STAND_INS = new java.util.HashMap<>();

  private EvacuationWorld(KubeCluster infra, String prefix, int infraNodeCount) {
    this.infra = infra;
    this.prefix = prefix;
    Crds.installTestCrds(infra);
    this.infraNodes =
        infra.kwokNodes().create(prefix + "-infra", infraNodeCount, Map.of(worldLabel(), prefix));
    this.reboots = standInFor(infra).reboots();
  }

  private static synchronized SharedStandIn standInFor(KubeCluster infra) {
    return STAND_INS.computeIfAbsent(
        infra.serverUrl(),
        k -> {
          GuestReboots reboots = new GuestReboots();
          return new SharedStandIn(KubeVirtStandIn.start(infra, reboots), reboots);
        });
  }

  /**
   * Stops the stand-in of {@code infra} (and unregisters its webhook), when no world needs it any
   * more.
   */
  public static synchronized void stopStandIn(KubeCluster infra) {
    SharedStandIn s = STAND_INS.remove(infra.serverUrl());
    if (s != null) {
      s.standIn().close();
    }
  }

  /**
   * Starts a world of {@code infraNodeCount} kwok infra nodes on {@code infra}; all its names start
   * with {@code prefix}.
   */
  public static EvacuationWorld start(KubeCluster infra, String prefix, int infraNodeCount) {
    return new EvacuationWorld(infra, prefix, infraNodeCount);
  }

  private static String worldLabel() {
    return "e2e.capk.dev/world";
  }

  public TenantCluster addTenant(String shortName, KubeCluster guest) {
    return addTenant(shortName, guest, infra);
  }

  /**
   * A tenant whose Cluster API objects live in {@code management} and whose VMs run in this world's
   * infra cluster.
   */
  public TenantCluster addTenant(String shortName, KubeCluster guest, KubeCluster management) {
    TenantCluster t =
        TenantCluster.create(
            management, infra, guest, prefix + "-" + shortName, prefix + "-" + shortName);
    tenants.put(shortName, t);
    return t;
  }

  /**
   * Adds VMs {@code names} to {@code tenant} and makes them run on {@code infraNode}: the world's
   * other infra nodes are cordoned while the scheduler places them.
   */
  public void addVmsOn(String infraNode, TenantCluster tenant, String strategy, String... names) {
    addVmsOn(infraNode, tenant, strategy, false, names);
  }

  /** As above; {@code controlPlane}: the VMs are the tenant's control-plane machines. */
  public void addVmsOn(
      String infraNode,
      TenantCluster tenant,
      String strategy,
      boolean controlPlane,
      String... names) {
    Kubectl k = infra.kubectl();
    List<String> others = infraNodes.stream().filter(n -> !n.equals(infraNode)).toList();
    others.forEach(n -> k.runOrFail(null, "cordon", n));
    try {
      for (String name : names) {
        tenant.addVm(name, strategy, Map.of(worldLabel(), prefix), controlPlane);
      }
      for (String name : names) {
        Await.until(
            "VMI " + tenant.namespace() + "/" + name + " Running on " + infraNode,
            Duration.ofSeconds(90),
            () ->
                (infraNode)
                    .equals(
                        k.run(
                                null,
                                Duration.ofSeconds(10),
                                "-n",
                                tenant.namespace(),
                                "get",
                                "vmi",
                                name,
                                "-o",
                                "jsonpath={.status.phase=='Running'}{.status.nodeName}")
                            .stdout()
                            .replace("true", "")));
      }
    } finally {
      others.forEach(n -> k.runOrFail(null, "uncordon", n));
    }
    reboots.track(tenant);
  }

  /** The real kubectl drain of an infra node, as an admin runs it; returns what kubectl printed. */
  public Kubectl.Result drainInfraNode(String node, Duration timeout) {
    return infra
        .kubectl()
        .run(
            null,
            timeout.plusSeconds(30),
            "drain",
            node,
            "--ignore-daemonsets",
            "--delete-emptydir-data",
            "--force",
            "--timeout=" + timeout.toSeconds() + "s");
  }

  public String vmiUid(TenantCluster tenant, String vmi) {
    return infra
        .kubectl()
        .run(
            null,
            Duration.ofSeconds(10),
            "-n",
            tenant.namespace(),
            "get",
            "vmi",
            vmi,
            "-o",
            "jsonpath={.metadata.uid}")
        .stdout();
  }

  public String vmiField(TenantCluster tenant, String vmi, String jsonPath) {
    return infra
        .kubectl()
        .run(
            null,
            Duration.ofSeconds(10),
            "-n",
            tenant.namespace(),
            "get",
            "vmi",
            vmi,
            "-o",
            "jsonpath={" + jsonPath + "}")
        .stdout();
  }

  private void dumpEvents() {
    StringBuilder dump = new StringBuilder();
    for (TenantCluster t : tenants.values()) {
      dump.append(
          infra
              .kubectl()
              .run(null, Duration.ofSeconds(30), "-n", t.namespace(), "get", "events", "-o", "yaml")
              .stdout());
      dump.append(
          t.guest()
              .kubectl()
              .run(null, Duration.ofSeconds(30), "get", "events", "-A", "-o", "yaml")
              .stdout());
    }
    try {
      java.nio.file.Files.writeString(
          dev.capk.vmieviction.e2e.harness.RepoPaths.workDir()
              .resolve("events-" + prefix + ".yaml"),
          dump);
    } catch (java.io.IOException e) {
      System.out.println("could not keep the events of world " + prefix + ": " + e.getMessage());
    }
  }

  public KubeCluster infra() {
    return infra;
  }

  public String prefix() {
    return prefix;
  }

  public List<String> infraNodes() {
    return infraNodes;
  }

  public List<TenantCluster> tenants() {
    return new ArrayList<>(tenants.values());
  }

  /** The namespaces the controller should watch for this world (its tenants' namespaces). */
  public List<String> controllerNamespaceFlags() {
    return tenants.values().stream().map(t -> "--namespace=" + t.namespace()).toList();
  }

  /**
   * Keeps the tenants' events (infra and guest) in a file for the suite's secret-leak check, then
   * removes the world's VMs so the shared stand-in stops acting on them.
   */
  @Override
  public void close() {
    dumpEvents();
    for (TenantCluster t : tenants.values()) {
      infra
          .kubectl()
          .run(
              null,
              Duration.ofSeconds(60),
              "-n",
              t.namespace(),
              "delete",
              "vm",
              "--all",
              "--wait=false");
    }
  }
}
