package dev.capk.vmieviction.e2e.integration.standin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.kubevirtstandin.GuestNodeHook;
import dev.capk.vmieviction.e2e.kubevirtstandin.KubeVirtStandIn;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The KubeVirt stand-in behaves as KubeVirt does through the API, for each eviction strategy. */
class KubeVirtStandInIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("standin-infra");

  private static KubeVirtStandIn standIn;
  private static final List<String> hookCalls = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() {
    LocalCluster c = infra.cluster();
    Crds.installTestCrds(c);
    c.kwokNodes().create("standin", 3);
    standIn =
        KubeVirtStandIn.start(
            c,
            new GuestNodeHook() {
              @Override
              public void vmStopped(String ns, String name) {
                hookCalls.add("stopped " + ns + "/" + name);
              }

              @Override
              public void vmRunning(String ns, String name, String node) {
                hookCalls.add("running " + ns + "/" + name);
              }
            });
  }

  @AfterAll
  static void stop() {
    if (standIn != null) {
      standIn.close();
    }
  }

  @Test
  void externalStrategyDeniesTheEvictionWith429AndMarksTheVmiForEvacuation() {
    Kubectl k = infra.cluster().kubectl();
    String ns = namespace(k, "ext");
    k.apply(vm(ns, "vm-ext", "External"));
    String node = awaitRunning(k, ns, "vm-ext");
    String pod = launcherPod(k, ns);
    Kubectl.Result evict = evict(k, ns, pod);
    assertTrue(
        evict.stderr().contains("429")
            || evict.stderr().contains("Too Many Requests")
            || evict.stderr().contains("evacuation"),
        "denied: " + evict.stderr());
    assertEquals(
        node,
        k.runOrFail(
            null, "-n", ns, "get", "vmi", "vm-ext", "-o", "jsonpath={.status.evacuationNodeName}"));
  }

  @Test
  void deletingTheVmiMakesTheVmStartANewOneWithANewUid() {
    Kubectl k = infra.cluster().kubectl();
    String ns = namespace(k, "recreate");
    k.apply(vm(ns, "vm-re", "External"));
    awaitRunning(k, ns, "vm-re");
    String uid =
        k.runOrFail(null, "-n", ns, "get", "vmi", "vm-re", "-o", "jsonpath={.metadata.uid}");
    k.runOrFail(null, "-n", ns, "delete", "vmi", "vm-re", "--cascade=foreground", "--wait=true");
    Await.until(
        "a new VMI vm-re",
        Duration.ofSeconds(60),
        () -> {
          String now =
              k.run(
                      null,
                      Duration.ofSeconds(10),
                      "-n",
                      ns,
                      "get",
                      "vmi",
                      "vm-re",
                      "-o",
                      "jsonpath={.metadata.uid}")
                  .stdout();
          return !now.isBlank() && !now.equals(uid);
        });
    awaitRunning(k, ns, "vm-re");
    String newUid =
        k.runOrFail(null, "-n", ns, "get", "vmi", "vm-re", "-o", "jsonpath={.metadata.uid}");
    assertNotEquals(uid, newUid);
    assertEquals(
        "VirtualMachine/vm-re",
        k.runOrFail(
            null,
            "-n",
            ns,
            "get",
            "vmi",
            "vm-re",
            "-o",
            "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}"),
        "the VM owns its new VMI");
    Await.until(
        "guest hook told of the restart",
        Duration.ofSeconds(30),
        () -> hookCalls.stream().filter(("running " + ns + "/vm-re")::equals).count() == 2);
    List<String> calls = hookCalls.stream().filter(c -> c.endsWith(" " + ns + "/vm-re")).toList();
    assertEquals(
        List.of("running " + ns + "/vm-re", "stopped " + ns + "/vm-re", "running " + ns + "/vm-re"),
        calls,
        "the guest node stops with the old VMI and runs again with the new one");
  }

  @Test
  void liveMigrateMovesTheVmiToAnotherNodeKeepingItsUid() {
    Kubectl k = infra.cluster().kubectl();
    String ns = namespace(k, "lm");
    k.apply(vm(ns, "vm-lm", "LiveMigrate"));
    String from = awaitRunning(k, ns, "vm-lm");
    String uid =
        k.runOrFail(null, "-n", ns, "get", "vmi", "vm-lm", "-o", "jsonpath={.metadata.uid}");
    Kubectl.Result evict = evict(k, ns, launcherPod(k, ns));
    assertTrue(evict.stderr().contains("evacuation"), "denied while migrating: " + evict.stderr());
    Await.until(
        "vm-lm to run on another node",
        Duration.ofSeconds(60),
        () -> {
          String node =
              k.runOrFail(
                  null, "-n", ns, "get", "vmi", "vm-lm", "-o", "jsonpath={.status.nodeName}");
          return !node.isBlank() && !node.equals(from);
        });
    assertEquals(
        uid, k.runOrFail(null, "-n", ns, "get", "vmi", "vm-lm", "-o", "jsonpath={.metadata.uid}"));
    assertEquals(
        "",
        k.runOrFail(
            null, "-n", ns, "get", "vmi", "vm-lm", "-o", "jsonpath={.status.evacuationNodeName}"));
  }

  @Test
  void aMigrationObjectWalksKubeVirtsPhasesAndMovesTheVmi() {
    Kubectl k = infra.cluster().kubectl();
    String ns = namespace(k, "vmim-ok");
    k.apply(vm(ns, "vm-mig", "External"));
    String from = awaitRunning(k, ns, "vm-mig");
    String uid =
        k.runOrFail(null, "-n", ns, "get", "vmi", "vm-mig", "-o", "jsonpath={.metadata.uid}");
    String source = launcherPod(k, ns);
    // Marked for evacuation first, as a refused eviction leaves it.
    assertTrue(evict(k, ns, source).stderr().contains("evacuation"));
    k.apply(migration(ns, "mig-ok", "vm-mig"));
    String phase = awaitMigrationDone(k, ns, "mig-ok");
    assertEquals("Succeeded", phase);
    String vmi =
        "{.metadata.uid}/{.status.nodeName}/{.status.evacuationNodeName}/"
            + "{.status.migrationState.completed}/{.status.migrationState.failed}";
    String[] got =
        k.runOrFail(null, "-n", ns, "get", "vmi", "vm-mig", "-o", "jsonpath=" + vmi).split("/", -1);
    assertEquals(uid, got[0], "same VMI");
    assertNotEquals(from, got[1], "runs on the target node");
    assertEquals("", got[2], "no longer marked for evacuation");
    assertEquals("true", got[3]);
    assertEquals("", got[4]);
    Await.until(
        "source launcher pod gone",
        Duration.ofSeconds(30),
        () ->
            !k.run(null, Duration.ofSeconds(10), "-n", ns, "get", "pods", "-o", "name")
                .stdout()
                .contains(source));
  }

  @Test
  void aMigrationToldToFailLeavesTheVmiOnItsNodeStillMarked() {
    Kubectl k = infra.cluster().kubectl();
    String ns = namespace(k, "vmim-fail");
    k.apply(vm(ns, "vm-fail", "External"));
    String from = awaitRunning(k, ns, "vm-fail");
    k.runOrFail(
        null, "-n", ns, "annotate", "vmi", "vm-fail", "standin.kubevirt.io/migration-result=fail");
    assertTrue(evict(k, ns, launcherPod(k, ns)).stderr().contains("evacuation"));
    k.apply(migration(ns, "mig-fail", "vm-fail"));
    assertEquals("Failed", awaitMigrationDone(k, ns, "mig-fail"));
    String[] got =
        k.runOrFail(
                null,
                "-n",
                ns,
                "get",
                "vmi",
                "vm-fail",
                "-o",
                "jsonpath={.status.nodeName}/{.status.evacuationNodeName}/"
                    + "{.status.migrationState.failed}")
            .split("/", -1);
    assertEquals(from, got[0], "still on its node");
    assertEquals(from, got[1], "still marked for evacuation");
    assertEquals("true", got[2]);
    Await.until(
        "only the source launcher pod left",
        Duration.ofSeconds(30),
        () ->
            k.run(null, Duration.ofSeconds(10), "-n", ns, "get", "pods", "-o", "name")
                    .stdout()
                    .lines()
                    .count()
                == 1);
  }

  static String migration(String ns, String name, String vmi) {
    return """
        apiVersion: kubevirt.io/v1
        kind: VirtualMachineInstanceMigration
        metadata: {name: %2$s, namespace: %1$s}
        spec: {vmiName: %3$s}
        """
        .formatted(ns, name, vmi);
  }

  static String awaitMigrationDone(Kubectl k, String ns, String name) {
    String[] phase = {""};
    Await.until(
        "migration " + name + " Succeeded or Failed",
        Duration.ofSeconds(60),
        () -> {
          phase[0] =
              k.run(
                      null,
                      Duration.ofSeconds(10),
                      "-n",
                      ns,
                      "get",
                      "virtualmachineinstancemigrations.kubevirt.io",
                      name,
                      "-o",
                      "jsonpath={.status.phase}")
                  .stdout();
          return phase[0].equals("Succeeded") || phase[0].equals("Failed");
        });
    return phase[0];
  }

  @Test
  void noneStrategyLetsTheEvictionThroughAndTheVmRestarts() {
    Kubectl k = infra.cluster().kubectl();
    String ns = namespace(k, "none");
    k.apply(vm(ns, "vm-none", "None"));
    awaitRunning(k, ns, "vm-none");
    String uid =
        k.runOrFail(null, "-n", ns, "get", "vmi", "vm-none", "-o", "jsonpath={.metadata.uid}");
    Kubectl.Result evict = evict(k, ns, launcherPod(k, ns));
    assertEquals(0, evict.exitCode(), evict.stderr());
    Await.until(
        "vm-none restarted as a new VMI",
        Duration.ofSeconds(60),
        () -> {
          String now =
              k.run(
                      null,
                      Duration.ofSeconds(10),
                      "-n",
                      ns,
                      "get",
                      "vmi",
                      "vm-none",
                      "-o",
                      "jsonpath={.metadata.uid}")
                  .stdout();
          return !now.isBlank() && !now.equals(uid);
        });
    assertNotEquals("", awaitRunning(k, ns, "vm-none"));
  }

  static String namespace(Kubectl k, String prefix) {
    String ns = prefix + "-" + Long.toHexString(System.nanoTime());
    k.runOrFail(null, "create", "namespace", ns);
    return ns;
  }

  static String vm(String ns, String name, String strategy) {
    return """
                apiVersion: kubevirt.io/v1
                kind: VirtualMachine
                metadata: {name: %2$s, namespace: %1$s}
                spec:
                  running: true
                  template:
                    metadata:
                      labels: {kubevirt.io/vm: %2$s}
                    spec:
                      evictionStrategy: %3$s
                      domain: {devices: {}, resources: {requests: {memory: 1Gi}}}
                """
        .formatted(ns, name, strategy);
  }

  static String awaitRunning(Kubectl k, String ns, String vmi) {
    Await.until(
        "VMI " + ns + "/" + vmi + " Running",
        Duration.ofSeconds(60),
        () ->
            "Running"
                .equals(
                    k.run(
                            null,
                            Duration.ofSeconds(10),
                            "-n",
                            ns,
                            "get",
                            "vmi",
                            vmi,
                            "-o",
                            "jsonpath={.status.phase}")
                        .stdout()));
    return k.runOrFail(null, "-n", ns, "get", "vmi", vmi, "-o", "jsonpath={.status.nodeName}");
  }

  static String launcherPod(Kubectl k, String ns) {
    return k.runOrFail(
        null,
        "-n",
        ns,
        "get",
        "pods",
        "-l",
        "kubevirt.io=virt-launcher",
        "--field-selector=status.phase=Running",
        "-o",
        "jsonpath={.items[0].metadata.name}");
  }

  /** A policy/v1 eviction through the API (kubectl has no direct verb for it). */
  static Kubectl.Result evict(Kubectl k, String ns, String pod) {
    String body =
        "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\""
            + pod
            + "\",\"namespace\":\""
            + ns
            + "\"}}";
    return k.run(
        body,
        Duration.ofSeconds(30),
        "create",
        "--raw",
        "/api/v1/namespaces/" + ns + "/pods/" + pod + "/eviction",
        "-f",
        "-");
  }
}
