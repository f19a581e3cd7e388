package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Who used the machine's CPU over a window: the whole machine (busy time of all cores), the
 * controller, the clusters' processes (etcd, kube-apiserver, kwok) and this benchmark's JVM,
 * sampled over time so that a window found only afterwards (from the API servers' audit logs) can
 * be cut out. What is busy and none of those is the rest of the machine (other work on a shared
 * machine, the kernel).
 */
final class CpuShares {

  record Sample(Instant at, double machine, double controller, double clusters, double bench) {}

  /** CPU seconds of each over a window of {@code seconds} seconds. */
  record Window(double seconds, double machine, double controller, double clusters, double bench) {
    double other() {
      return Math.max(0, machine - controller - clusters - bench);
    }

    /** Of the machine's whole capacity ({@code cores} × the window), the part that was busy. */
    double utilization(int cores) {
      return seconds <= 0 ? 0 : machine / (cores * seconds);
    }
  }

  private final long controllerPid;
  private final List<Long> clusterPids;
  private final List<Sample> samples = new CopyOnWriteArrayList<>();

  CpuShares(long controllerPid, List<Long> clusterPids) {
    this.controllerPid = controllerPid;
    this.clusterPids = List.copyOf(clusterPids);
  }

  void sample() {
    double clusters = 0;
    for (long pid : clusterPids) {
      clusters += Math.max(0, ControllerProcess.processCpuSeconds(pid));
    }
    samples.add(
        new Sample(
            Instant.now(),
            Machine.busyCpuSeconds(),
            ControllerProcess.processCpuSeconds(controllerPid),
            clusters,
            ControllerProcess.processCpuSeconds(ProcessHandle.current().pid())));
  }

  /**
   * The window from the last sample at or before {@code from} to the first at or after {@code to}
   * (so it covers the asked window, widened by at most one sampling interval at each end).
   */
  Window between(Instant from, Instant to) {
    if (samples.size() < 2) {
      return new Window(0, 0, 0, 0, 0);
    }
    Sample a = samples.get(0);
    Sample b = samples.get(samples.size() - 1);
    for (Sample s : samples) {
      if (!s.at().isAfter(from)) {
        a = s;
      }
    }
    for (int i = samples.size() - 1; i >= 0; i--) {
      if (!samples.get(i).at().isBefore(to)) {
        b = samples.get(i);
      }
    }
    return new Window(
        ServerTimes.seconds(a.at(), b.at()),
        b.machine() - a.machine(),
        b.controller() - a.controller(),
        b.clusters() - a.clusters(),
        b.bench() - a.bench());
  }
}
