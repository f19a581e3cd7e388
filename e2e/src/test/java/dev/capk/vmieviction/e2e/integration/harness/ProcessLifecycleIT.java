package dev.capk.vmieviction.e2e.integration.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.ManagedProcess;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The harness stops exactly what it started, and a component that cannot start says why. */
class ProcessLifecycleIT {

  @Test
  void closingAClusterLeavesNoneOfItsProcessesAlive() {
    List<Long> pids;
    try (LocalCluster cluster = LocalCluster.builder("lifecycle").withAll().start()) {
      pids = cluster.pids();
      assertEquals(
          5, pids.size(), "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok");
      for (long pid : pids) {
        assertTrue(
            ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
            "running before close: " + pid);
      }
    }
    for (long pid : pids) {
      assertFalse(
          ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
          "still alive after close: " + pid);
    }
  }

  @Test
  void anApiServerThatWillNotStartFailsFastNamingTheComponentTheCommandAndItsLog() {
    LocalCluster.Builder broken = LocalCluster.builder("broken").apiServerFlag("--no-such-flag=1");
    IllegalStateException e = assertThrows(IllegalStateException.class, broken::start);
    String message = e.getMessage();
    assertTrue(message.startsWith("kube-apiserver exited during start-up"), message);
    assertTrue(message.contains("--no-such-flag=1"), "names the command: " + message);
    assertTrue(message.contains("unknown flag: --no-such-flag"), "quotes the log: " + message);
  }

  @Test
  void aFailedStartStopsTheProcessesItHadAlreadyStarted() {
    LocalCluster.Builder broken =
        LocalCluster.builder("broken-etcd-left").apiServerFlag("--no-such-flag=1");
    long before = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).count();
    assertThrows(IllegalStateException.class, broken::start);
    long etcdLeft =
        ProcessHandle.current()
            .children()
            .filter(h -> h.info().command().map(c -> c.endsWith("/etcd")).orElse(false))
            .filter(
                h ->
                    h.info()
                        .arguments()
                        .map(a -> String.join(" ", a).contains("broken-etcd-left"))
                        .orElse(false))
            .count();
    assertEquals(0, etcdLeft, "etcd of the failed cluster must be stopped");
    assertTrue(
        ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).count() <= before,
        "no process left behind by the failed start");
  }

  @Test
  void aProcessIsStoppedByItsOwnPid() throws Exception {
    ManagedProcess sleeper =
        ManagedProcess.start(
            "sleeper",
            List.of("sleep", "300"),
            java.nio.file.Files.createTempFile("sleeper", ".log"),
            java.util.Map.of());
    long pid = sleeper.pid();
    assertTrue(sleeper.isAlive());
    sleeper.close();
    assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
  }
}
