package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * An informer on a kind the API server does not serve (its CRD not installed): the official
 * client's reflector lists it again every second for ever and, left to itself, logs an ERROR with a
 * stack trace each time. The controller's lists back off and its log says the failure with a count.
 * The controller runs in-process (its Main), its log captured as it is written.
 */
class InformerFailureLogIT {

  @RegisterExtension
  static final LocalClusterExtension infraExt = LocalClusterExtension.shared("infra");

  static final Path NODE_MAINTENANCE_CRD =
      RepoPaths.root().resolve("config/crd/nodemaintenance.medik8s.io_nodemaintenances.yaml");

  /** How long the failures are let run: at one list a second, 25 lists and 5 counted lines. */
  static final Duration FAILING = Duration.ofSeconds(25);

  static LocalCluster infra;
  final ListAppender<ILoggingEvent> log = new ListAppender<>();
  Manager manager;
  boolean crdInstalled;

  @BeforeAll
  static void cluster() {
    infra = infraExt.cluster();
    Crds.installTestCrds(infra);
  }

  @AfterEach
  void stop() {
    if (manager != null) {
      manager.close();
    }
    root().detachAppender(log);
    if (crdInstalled) {
      // Other test classes share the infra cluster: leave it without the CRD, as it was.
      infra.kubectl().runOrFail(null, "delete", "-f", NODE_MAINTENANCE_CRD.toString());
    }
  }

  @Test
  void aKindWhoseCrdIsNotInstalledIsLoggedWithACountNotEverySecondAndRecovers() throws Exception {
    assertFalse(
        infra
            .kubectl()
            .run(null, WAIT, "get", "crd", "nodemaintenances.nodemaintenance.medik8s.io")
            .ok(),
        "the scenario: the shared infra cluster has no NodeMaintenance CRD");
    log.start();
    root().addAppender(log);
    manager =
        Main.start(
            "--kubeconfig",
            infra.kubeconfig().toString(),
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--namespace",
            unique("no-crd"),
            "--enable-node-maintenance");

    Await.until(
        "the first failure of the NodeMaintenance informer logged",
        WAIT,
        () -> !aboutNodeMaintenance().isEmpty());
    Thread.sleep(FAILING.toMillis());

    List<String> lines = aboutNodeMaintenance();
    String seen = String.join("\n", lines);
    assertTrue(lines.size() <= 3, "a few lines, not one (with a stack trace) per list:\n" + seen);
    assertTrue(
        lines.get(0).contains("kind=NodeMaintenance")
            && lines.get(0).contains("is its CustomResourceDefinition installed?"),
        "the first line names the kind and the likely cause:\n" + seen);
    assertTrue(
        lines.stream().anyMatch(l -> l.contains("informer list/watch failed 4 times since ")),
        "the repeats are counted:\n" + seen);
    assertFalse(manager.ready(), "not ready while NodeMaintenances cannot be listed");

    // Installed late: the backed-off informer lists again, syncs, and says so once.
    infra
        .kubectl()
        .runOrFail(null, "apply", "--server-side", "-f", NODE_MAINTENANCE_CRD.toString());
    crdInstalled = true;
    Await.until("ready once the CRD is installed", WAIT, manager::ready);
    // Told when the watch opens, which can come just after the cache synced.
    Await.until("the recovery told", WAIT, () -> !recovered().isEmpty());
    List<String> recovered = recovered();
    assertEquals(1, recovered.size(), String.join("\n", recovered));
    assertTrue(recovered.get(0).contains(" failures="), recovered.get(0));
  }

  /** The lines at WARN or above about the NodeMaintenance informer, any logger's. */
  List<String> aboutNodeMaintenance() {
    return logged().stream()
        .filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
        .filter(e -> e.getFormattedMessage().contains("NodeMaintenance"))
        .map(e -> e.getLevel() + " " + e.getLoggerName() + " " + e.getFormattedMessage())
        .collect(Collectors.toList());
  }

  List<ILoggingEvent> logged() {
    synchronized (log) { // the appender appends under this lock
      return new ArrayList<>(log.list);
    }
  }

  static Logger root() {
    return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  private List<String> recovered() {
    return logged().stream()
        .map(ILoggingEvent::getFormattedMessage)
        .filter(m -> m.startsWith("informer list/watch recovered kind=NodeMaintenance"))
        .toList();
  }
}
