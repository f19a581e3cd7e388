package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
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

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  static final String NS = "ev-status";
  static final String TENANT = "tenant-status";
  static final String INFRA_NODE = "infra-node-status";
  static final String LAUNCHER = "kubectl-vmi_eviction";

  @TempDir static Path pluginDir;

  static String first;
  static String second;
  static String guestNs;

  @BeforeAll
  static void start() throws Exception {
    world.tenant(NS, TENANT, world.guest());
    // Nothing of this class may keep evacuating on the shared clusters.
    world.deleteAfterAll(NS);
    world.startController(
        NS, flags("--drain-timeout 20m --drain-retry-interval 1s --drain-attempt-timeout 1s"));

    first = unique("cp-first");
    second = unique("cp-second");
    for (String vm : List.of(first, second)) {
      world.guest().kwokNodes().createNamed(vm, Map.of(CapkLabels.NODE_ROLE_CONTROL_PLANE, ""));
      vmi(world.infra(), NS, vm, TENANT, "External");
      world.infraKubectl(
          "-n",
          NS,
          "label",
          "virtualmachineinstances.kubevirt.io",
          vm,
          CapkLabels.ROLE + "=" + CapkLabels.ROLE_CONTROL_PLANE);
    }
    guestNs = unique("status-budget");
    world.guestApply(
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
    // Allowing no disruption.
    EvictionFixture.awaitBudget(world.guest(), guestNs, "db-never", 1, 0);

    evacuate(world.infra(), NS, first, INFRA_NODE);
    awaitEvent(world.infra(), NS, first, "DrainBlocked");
    evacuate(world.infra(), NS, second, INFRA_NODE);
    awaitEvent(world.infra(), NS, second, "EvacuationHeld");

    // As `make package` leaves them: both launchers beside the jar.
    for (String launcher : List.of(LAUNCHER, "kubectl-fastdrain")) {
      Files.copy(
          RepoPaths.root().resolve("hack/plugin").resolve(launcher), pluginDir.resolve(launcher));
    }
    Files.copy(ControllerProcess.jar(), pluginDir.resolve("vmi-eviction-controller.jar"));
  }

  private record Run(int code, String out, String err) {}

  private static Run status(String... flags) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<String> args = new ArrayList<>(List.of("status", "--kubeconfig"));
    args.add(world.infra().kubeconfig().toString());
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
  void kubectlVmiEvictionStatusRunsTheSameCommandAndItsSecondRunMapsTheCacheTheFirstMade()
      throws Exception {
    Run made = kubectlVmiEvictionStatus();
    assertEquals(0, made.code(), made.err());
    assertEquals("", made.err(), "making the start-up cache writes nothing on stderr");
    assertPhasesAndBlockers(made.out());
    try (var files = Files.list(pluginDir)) {
      assertEquals(
          1,
          files.filter(f -> f.toString().endsWith(".aot")).count(),
          "the cache kubectl-fastdrain makes, beside the jar");
    }
    Run mapped = kubectlVmiEvictionStatus();
    assertEquals(0, mapped.code(), mapped.err());
    assertEquals("", mapped.err());
    assertPhasesAndBlockers(mapped.out());
  }

  private static Run kubectlVmiEvictionStatus() throws Exception {
    List<String> command = new ArrayList<>();
    command.add(world.infra().binaries().kubectl().toString());
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
    env.remove("FASTDRAIN_JAR");
    env.remove("JAVA");
    env.put("KUBECONFIG", world.infra().kubeconfig().toString());
    Process p = pb.start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p, true));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p, false));
    if (!p.waitFor(2, TimeUnit.MINUTES)) {
      p.destroyForcibly().waitFor();
      throw new IllegalStateException("kubectl vmi-eviction status did not finish");
    }
    return new Run(p.exitValue(), out.join(), err.join());
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
