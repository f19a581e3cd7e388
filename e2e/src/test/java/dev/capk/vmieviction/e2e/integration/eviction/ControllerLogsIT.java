package dev.capk.vmieviction.e2e.integration.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.RefusingProxy;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The controller's log as an operator reads it: the jar in its own process, behind a proxy that
 * answers its first VMI lists with the API server's 429 (as a server whose storage is initialising
 * or whose priority level is full does), then stopped as Kubernetes stops a pod.
 */
class ControllerLogsIT {

  @RegisterExtension
  static final LocalClusterExtension infraExt = LocalClusterExtension.shared("infra");

  static final String NS = "controller-logs-it";

  /** The VMI informer's lists (not its watches). */
  /** The VMI informer's lists: a streaming list (a watch that sends the state), or a page. */
  static final Predicate<String> VMI_LISTS =
      l ->
          l.startsWith("GET ")
              && l.contains("virtualmachineinstances")
              && (l.contains("sendInitialEvents=true") || !l.contains("watch=true"));

  static final String VMI_KIND = "kind=VirtualMachineInstance ";

  RefusingProxy proxy;
  ControllerProcess controller;

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  @Test
  void aTransient429AtStartIsOneWarningLineAndSigtermEndsWithExitZeroAndNoError() throws Exception {
    LocalCluster infra = infraExt.cluster();
    Crds.installTestCrds(infra);
    infra.kubectl().runOrFail(null, "create", "namespace", NS);
    proxy = RefusingProxy.start(infra);
    AtomicInteger seen = new AtomicInteger();
    proxy.refuse(l -> VMI_LISTS.test(l) && seen.incrementAndGet() <= 3);
    Path dir = EvictionFixture.tempDir("vmi-eviction-logs-it");
    Path kubeconfig =
        EvictionFixture.controllerKubeconfig(infra, dir, proxy.url(), proxy.caCertificatePem());

    controller =
        ControllerProcess.start(
            "logs", dir, List.of("--kubeconfig=" + kubeconfig, "--namespace=" + NS));
    assertTrue(proxy.refused(VMI_LISTS) >= 1, "the scenario: a VMI list was answered 429");
    // The recovery is told when the watch opens, which can come just after /readyz. Other
    // informers may meet a 429 of a server just started too: the VMI informer's lines are read.
    Await.until(
        "the recovery logged",
        Duration.ofSeconds(30),
        () -> Files.readString(controller.log()).contains("list/watch recovered " + VMI_KIND));
    int exit = controller.terminate();

    List<String> log = Files.readAllLines(controller.log());
    String all = String.join("\n", log);
    assertEquals(0, exit, "exit code after SIGTERM\n" + all);
    assertTrue(log.stream().noneMatch(l -> l.contains(" ERROR ")), "an ERROR line\n" + all);
    assertTrue(
        log.stream().noneMatch(l -> l.startsWith("\tat ") || l.startsWith("Caused by")),
        "a stack trace\n" + all);
    // The 429s (the proxy's 3, and any of a server just started): the first told at once with
    // what comes next, the repeats with a count, the recovery with the number of failures.
    List<String> told =
        log.stream().filter(l -> l.contains("429") && l.contains(VMI_KIND)).toList();
    assertTrue(
        told.get(0).contains(" WARN ") && told.get(0).contains("retryIn="),
        "the first 429 told in one WARN line with what happens next\n" + all);
    String recovered =
        log.stream()
            .filter(l -> l.contains("list/watch recovered " + VMI_KIND))
            .findFirst()
            .orElseThrow();
    int failures = Integer.parseInt(recovered.replaceAll(".* failures=([0-9]+).*", "$1"));
    assertTrue(failures >= 3, recovered);
    assertTrue(told.size() < failures, "repeats counted, not told each\n" + all);
  }
}
