package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import dev.capk.vmieviction.status.StatusCommand;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code status} command against a live evacuation: two control-plane VMIs of one tenant are
 * evacuated, the first drains a guest node whose pod a budget never lets go, the second is held by
 * the quorum guard until the first is done. The status, read from the infra cluster only, shows the
 * first Draining with the budget named and the second Held with what it waits for: as a table, as
 * JSON, and through the kubectl plugin launcher run by the real kubectl.
 */
class StatusCommandIT {

  @RegisterExtension
  static final LocalClusterExtension infraExt =
      LocalClusterExtension.shared("infra", LocalCluster.Builder::withAll);

  @RegisterExtension
  static final LocalClusterExtension guestExt =
      LocalClusterExtension.shared("guest-a", LocalCluster.Builder::withAll);

  static final String NS = "ev-status";
  static final String TENANT = "tenant-status";
  static final String INFRA_NODE = "infra-node-status";
  static final String LAUNCHER = "kubectl-vmi_eviction";

  @TempDir static Path pluginDir;

  static LocalCluster infra;
  static LocalCluster guest;
  static Manager manager;
  static String first;
  static String second;
  static String guestNs;

  @BeforeAll
  static void start() throws Exception {
    infra = infraExt.cluster();
    guest = guestExt.cluster();
    Crds.installTestCrds(infra);
    Path kubeconfig =
        EvictionFixture.controllerKubeconfig(infra, EvictionFixture.tempDir("status-it"));
    EvictionFixture.namespace(infra, NS);
    EvictionFixture.cluster(infra, NS, TENANT);
    EvictionFixture.kubeconfigSecret(infra, NS, TENANT, guest.adminKubeconfigYaml());
    manager =
        Main.start(
            "--kubeconfig", kubeconfig.toString(),
            "--metrics-bind-address", "0",
            "--health-probe-bind-address", "0",
            "--namespace", NS,
            "--drain-timeout", "20m",
            "--drain-retry-interval", "1s",
            "--drain-attempt-timeout", "1s");
    Await.until("controller ready", WAIT, manager::ready);

    first = unique("cp-first");
    second = unique("cp-second");
    for (String vm : List.of(first, second)) {
      guest.kwokNodes().createNamed(vm, Map.of(CapkLabels.NODE_ROLE_CONTROL_PLANE, ""));
      vmi(infra, NS, vm, TENANT, "External");
      infra
          .kubectl()
          .runOrFail(
              null,
              "-n",
              NS,
              "label",
              "virtualmachineinstances.kubevirt.io",
              vm,
              CapkLabels.ROLE + "=" + CapkLabels.ROLE_CONTROL_PLANE);
    }
    guestNs = unique("status-budget");
    guest
        .kubectl()
        .apply(
            """
            apiVersion: v1
            kind: Namespace
            metadata: {name: %1$s}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {name: db-0, namespace: %1$s, labels: {app: db}}
            spec:
              nodeName: %2$s
              terminationGracePeriodSeconds: 0
              containers: [{name: main, image: db:fake}]
            ---
            apiVersion: policy/v1
            kind: PodDisruptionBudget
            metadata: {name: db-never, namespace: %1$s}
            spec:
              minAvailable: 1
              selector: {matchLabels: {app: db}}
            """
                .formatted(guestNs, first));
    Await.until(
        "budget db-never computed, allowing no disruption",
        WAIT,
        () -> {
          var pdb =
              new io.kubernetes.client.openapi.apis.PolicyV1Api(guest.client())
                  .readNamespacedPodDisruptionBudget("db-never", guestNs)
                  .execute();
          return pdb.getStatus() != null
              && Integer.valueOf(1).equals(pdb.getStatus().getCurrentHealthy())
              && Integer.valueOf(0).equals(pdb.getStatus().getDisruptionsAllowed());
        });

    evacuate(infra, NS, first, INFRA_NODE);
    awaitEvent(infra, NS, first, "DrainBlocked");
    evacuate(infra, NS, second, INFRA_NODE);
    awaitEvent(infra, NS, second, "EvacuationHeld");

    Files.copy(
        RepoPaths.root().resolve("hack/plugin").resolve(LAUNCHER), pluginDir.resolve(LAUNCHER));
    Files.copy(ControllerProcess.jar(), pluginDir.resolve("vmi-eviction-controller.jar"));
  }

  @AfterAll
  static void stop() {
    if (manager != null) {
      manager.close();
    }
    // Nothing of this class may keep evacuating on the shared clusters.
    if (infra != null) {
      infra
          .kubectl()
          .run(null, java.time.Duration.ofSeconds(30), "delete", "namespace", NS, "--wait=false");
    }
  }

  private record Run(int code, String out, String err) {}

  private static Run status(String... flags) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<String> args = new ArrayList<>(List.of("status", "--kubeconfig"));
    args.add(infra.kubeconfig().toString());
    args.addAll(List.of("-n", NS, "--drain-timeout", "20m"));
    args.addAll(List.of(flags));
    int code =
        StatusCommand.run(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            args.toArray(String[]::new));
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void tableShowsTheDrainingVmiWithItsBudgetAndTheHeldOneWithWhatItWaitsFor() {
    Run r = status();
    assertEquals(0, r.code, r.err);
    List<String> lines = r.out.lines().toList();
    assertEquals(3, lines.size(), r.out);
    assertEquals(
        List.of(
            "NAMESPACE",
            "VMI",
            "CLUSTER",
            "GUEST-NODE",
            "INFRA-NODE",
            "PHASE",
            "TIME-LEFT",
            "BLOCKED-BY"),
        List.of(lines.get(0).split("\\s+")),
        r.out);
    // The one that started first has the least time left: first.
    assertTrue(
        lines
            .get(1)
            .matches(
                NS
                    + " +"
                    + first
                    + " +"
                    + TENANT
                    + " +"
                    + first
                    + " +"
                    + INFRA_NODE
                    + " +Draining +19m\\d+s +Guest node "
                    + first
                    + " not drained yet \\(1 pod\\(s\\) left\\): PodDisruptionBudgets "
                    + guestNs
                    + "/db-never \\(pod "
                    + guestNs
                    + "/db-0\\)"),
        r.out);
    assertTrue(
        lines
            .get(2)
            .matches(
                NS
                    + " +"
                    + second
                    + " +"
                    + TENANT
                    + " +<none> +"
                    + INFRA_NODE
                    + " +Held +19m\\d+s +The control-plane guest node is not drained yet, waiting"
                    + " for: control-plane VMI "
                    + first
                    + " still being evacuated.*"),
        r.out);
  }

  @Test
  void jsonSaysTheSame() {
    Run r = status("-o", "json");
    assertEquals(0, r.code, r.err);
    assertPhasesAndBlockers(r.out);
  }

  @Test
  void kubectlVmiEvictionStatusRunsTheSameCommand() throws Exception {
    List<String> command = new ArrayList<>();
    command.add(infra.binaries().kubectl().toString());
    command.addAll(
        List.of("vmi-eviction", "status", "-o", "json", "-n", NS, "--drain-timeout", "20m"));
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    Path javaBin = Path.of(System.getProperty("java.home"), "bin");
    env.put(
        "PATH",
        pluginDir
            + File.pathSeparator
            + javaBin
            + File.pathSeparator
            + env.getOrDefault("PATH", ""));
    env.remove("VMI_EVICTION_JAR");
    env.remove("JAVA");
    env.put("KUBECONFIG", infra.kubeconfig().toString());
    Process p = pb.start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p, true));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p, false));
    if (!p.waitFor(2, TimeUnit.MINUTES)) {
      p.destroyForcibly().waitFor();
      throw new IllegalStateException("kubectl vmi-eviction status did not finish");
    }
    assertEquals(0, p.exitValue(), err.join());
    assertPhasesAndBlockers(out.join());
  }

  private static void assertPhasesAndBlockers(String json) {
    JsonArray items = JsonParser.parseString(json).getAsJsonObject().getAsJsonArray("evacuations");
    assertEquals(2, items.size(), json);
    JsonObject a = items.get(0).getAsJsonObject();
    assertEquals(first, a.get("name").getAsString(), json);
    assertEquals("Draining", a.get("phase").getAsString(), json);
    assertEquals(TENANT, a.get("cluster").getAsString(), json);
    assertEquals("control-plane", a.get("role").getAsString(), json);
    assertEquals(first, a.get("guestNode").getAsString(), json);
    assertEquals(INFRA_NODE, a.get("infraNode").getAsString(), json);
    assertEquals("DrainBlocked", a.getAsJsonObject("blockedBy").get("reason").getAsString());
    assertTrue(
        a.getAsJsonObject("blockedBy")
            .get("message")
            .getAsString()
            .contains("PodDisruptionBudgets " + guestNs + "/db-never"),
        json);
    long left = a.get("secondsLeft").getAsLong();
    assertTrue(left > 0 && left <= 20 * 60, json);
    JsonObject b = items.get(1).getAsJsonObject();
    assertEquals(second, b.get("name").getAsString(), json);
    assertEquals("Held", b.get("phase").getAsString(), json);
    assertEquals("EvacuationHeld", b.getAsJsonObject("blockedBy").get("reason").getAsString());
    assertTrue(
        b.getAsJsonObject("blockedBy")
            .get("message")
            .getAsString()
            .contains("control-plane VMI " + first + " still being evacuated"),
        json);
  }

  private static String read(Process p, boolean stdout) {
    try (var in = stdout ? p.getInputStream() : p.getErrorStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }
}
